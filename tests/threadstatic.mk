# ThreadStatic tests: see tests/local.mk
