"""The sandbox: bubblewrap jails, their limits, networks and egress proxy, and the sockets
that reach through them."""
