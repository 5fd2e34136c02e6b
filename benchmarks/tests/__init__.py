"""The harness's own checks (``make test`` runs them beside the package's tests)."""
