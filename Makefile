.PHONY: dev test check snapshot-update bench

dev:            ## run the app on the shipped knowledge base, replaying recorded answers
	helpdesk

test:           ## the README's test command
	python -m pytest

check:          ## lint, type-check, and check the layering contracts (pyproject.toml)
	ruff check chatbot tests bench
	ruff format --check chatbot tests bench
	mypy
	lint-imports

snapshot-update:  ## re-record SVG snapshots (review the report first)
	python -m pytest tests/tui --snapshot-update -n 0

bench:
	python bench/run.py --quick
