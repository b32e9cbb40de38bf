"""The hook runtime: the path of one hook call (``hook``: arguments, ``intake``, ``peek``,
``index``, then ``watchdog`` and its ``worker``, which ``load``, ``compile`` and
``process``), and the in-process entry for hosts that call Python (``inproc``)."""
