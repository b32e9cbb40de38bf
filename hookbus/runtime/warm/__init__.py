"""The warm server (``server``, its socket ``listen``, its protocol ``wire``, ``served``, the forked
child that answers one call, and its ``pool`` of workers) and its stdlib-only ``client``, with
``fallback``, what the client does when no server answers."""
