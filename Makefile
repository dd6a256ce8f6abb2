.PHONY: dev test check snapshot-update bench messages

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

# Translations (README: Languages). `messages` gathers every sentence marked for translation
# into the template and merges it into each catalog; translate the new empty msgstr entries in
# chatbot/locales/*/LC_MESSAGES/helpdesk.po. The app compiles the .po files when it loads them.
messages:       ## update the translation template and catalogs from the source
	pybabel extract --project=helpdesk --add-location=file --sort-by-file --no-wrap \
		-o chatbot/locales/helpdesk.pot chatbot
	pybabel update --domain=helpdesk --input-file=chatbot/locales/helpdesk.pot \
		--output-dir=chatbot/locales --no-wrap --no-fuzzy-matching --ignore-obsolete
