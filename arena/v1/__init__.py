"""Generated from arena/proto/arena/v1 (scripts/gen_protos.py)."""
