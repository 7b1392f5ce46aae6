"""What confines the worker, and the judge's handle on it.

    limits.py      the worker's limits (values from grading.yml only)
    view.py        what a worker may reach: its file system view and its
                   environment, computed in the judge as plain data
    confine.py     runs in the new worker process before any student code:
                   control groups, session, rlimits, the private mount and
                   network namespaces, the view (a new root), the uid drop
    cgroup.py      a control group per worker (process and memory caps,
                   peak memory, kill what it left)
    uids.py        one unprivileged uid per judge process
    forkserver.py  the fork server (torch imported once) and its client
    client.py      one live worker as the judge sees it (requests, deaths)

Nothing here imports the judge or the private root.
"""
