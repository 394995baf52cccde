"""The pipeline of stages on screen: the live trace the views read, the stage panel and its rows,
the heads grid, the token strip, the q-k dot product view and the long-context summary."""
