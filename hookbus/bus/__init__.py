"""The bus: portable events, replies and their merge, handler marks and dispatch."""
