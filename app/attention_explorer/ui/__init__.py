"""Qt views of a Session.

Views observe the session and the live trace; they never compute attention.
"""
