"""Authorization (OAuth 2.1): the resource server's token checks and the OAuth client.

Internal; the public names are re-exported by :mod:`mcpkit.auth`.
"""
