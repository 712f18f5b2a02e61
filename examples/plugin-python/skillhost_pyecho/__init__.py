"""skillhost-sandbox-pyecho: a minimal skillhost sandbox plugin in Python,
written from docs/contract.md alone. contract.py is the protocol, backend.py
the backend, runner.py and supervisor.py the process handling; gen/ holds
generated stubs (see ../generate.sh)."""
