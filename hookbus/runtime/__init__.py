"""The hook runtime: the path of one hook call (``hook``: arguments, ``intake``, ``peek``,
``index``, then ``watchdog`` and its ``worker``, which ``load``, ``compile`` and
``process``), the in-process entry for hosts that call Python (``inproc``), and the warm
server (``server``, its socket ``listen``, its protocol ``wire``, and ``served``, the
forked child that answers one call)."""
