"""One module per view of an ``ExplorerState``: mesh, metrics, …"""
