"""Scripted fake model servers, one module per wire format (stdlib only)."""
