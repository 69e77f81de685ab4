"""Workloads: each builds its tables in a sandbox cluster and lists queries."""
