"""Fleet investigations: one question, many hosts (issue 14).

A :class:`~agentkit._fleet._outcome.Transport` runs one batch of catalog tasks on each host
(the host runs agentkit's own recipe runner and sandbox, locally) and yields one
:class:`~agentkit._fleet._outcome.HostOutcome` per host as it arrives; the fold groups
identical fact values into node ranges, names the outliers with their own evidence, and puts
every host in exactly one bucket.

Nothing here is imported by a one-host run, and the engines' libraries (asyncssh,
ClusterShell, ray) are imported only inside the modules that need them.
"""
