"""Model backends behind one async method: ``complete(request) -> response``."""
