"""The state the views read: the live trace of the session, the panels' shared context
(session, history, preferences), the preferences themselves, and the links between sessions
and panels."""
