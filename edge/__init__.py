"""Edge programs of the Vendor CS Agent: the uploader (staff PC) and the sender (staff Mac).

Plain Python 3.11+ with `httpx` as the only third-party dependency: no Django import anywhere in this package,
so the folder can be copied to a staff machine on its own. See docs/edge.md.
"""

__version__ = "1.0.0"
