# report.mk: the HTML report of a run (harness/report/). Included by the top-level
# Makefile after deps.mk and python.mk, which provide B, VENV_STAMP, VENV_PY,
# DEBIAN_DEPS (debian_dep) and the bench target.
#
#   report             $(REPORT)/index.html from $(REPORT)/results.json and, when
#                      present, $(REPORT)/interop.json, $(REPORT)/bench.json and the
#                      newest build/fuzz/nightly/*/summary.json (REPORT_FUZZ=FILE picks
#                      another); REPORT_BASELINE=OLD.json marks new failures and fixes.
#                      `make run` ends with it.
#   report-check       the browser lane of `make check`: the page of a fixed small run
#                      (harness/tests/report/: a Fail, two Warnings (a SHOULD and a
#                      TSM clause), a Crash, an XFail, an Error, NotSupported, Skip,
#                      the profile and score, case names with markup and with invalid
#                      UTF-8, an interop matrix with a failing pair, bench
#                      figures, a fuzz summary, a baseline) rendered and read back from
#                      headless Chromium's DOM (harness/report/check_report.py), with a
#                      screenshot $(REPORT)/report-check.png; then, when the case lanes
#                      left $(REPORT)/results.json, the page of that run, checked alike.
#   report-screenshot  regenerates docs/report.png (docs/reports.md shows it) from the fixture.
#   bench-report       `make bench`, its figures as $(REPORT)/bench.json, then `report`.
#   third-party-table  runs the lane of every third party (THIRD_PARTIES' targets, then
#                      `interop` for the Python peers) and writes README.md's table of
#                      their Pass/Fail/XFail/NotSupported counts from the JSON reports
#                      (harness/report/third_parties.py); a failing lane's counts go in
#                      the table too. Today's PyTorch's two rows come from
#                      $(TORCH_SUMMARY) (wheel.mk), the committed record of lane torch's last
#                      run, which that lane checks against its own reports.
#   third-party-table-check  runs nothing: the table from the reports the lanes left (and
#                      $(TORCH_SUMMARY)) must equal README.md's (lane third-party-table of
#                      `make check`).
#
# The page is one file (inline CSS and SVG, no script, nothing fetched). Jinja2 and
# matplotlib are PIP_PINS, chromium a Debian package (deps.mk).

REPORT_PY := $(VENV_PY) harness/report/tsm_report.py
REPORT_CHECK_PY := $(VENV_PY) harness/report/check_report.py
REPORT_FIXTURE := harness/tests/report
REPORT_FUZZ ?= $(lastword $(sort $(wildcard build/fuzz/nightly/*/summary.json)))
REPORT_BASELINE ?=
CHROMIUM := /usr/bin/chromium
# The hostile texts of the fixture that the page must show as text (invalid UTF-8 as
# U+FFFD, a lone surrogate escape as its text).
REPORT_HOSTILE_ARGS := --hostile 'managers/hostile/<script>alert("pwned")</script>.tsm' \
  --hostile 'adapter said "caf�' --hostile 'hostile/bad-��-name.tsm' \
  --hostile 'a lone surrogate \udcff in'
REPORT_CHECK_DIR = $(REPORT)/check

$(eval $(call debian_dep,$(CHROMIUM),chromium))

.PHONY: report report-check report-screenshot bench-report

report: | $(VENV_STAMP)
	@test -f $(REPORT)/results.json || \
	  { echo "no $(REPORT)/results.json: run 'make run' first" >&2; exit 1; }
	@$(REPORT_PY) $(REPORT)/results.json $(wildcard $(REPORT)/interop.json) \
	  $(wildcard $(REPORT)/bench.json) $(REPORT_FUZZ) -o $(REPORT)/index.html \
	  $(if $(REPORT_BASELINE),--baseline $(REPORT_BASELINE))

# The fixture's page: $(1) the HTML file, $(2) more options of tsm_report.py.
report_fixture = $(VENV_PY) harness/report/bench_text.py $(REPORT_FIXTURE)/bench.txt \
    -o $(REPORT_CHECK_DIR)/bench.json && \
  $(REPORT_PY) $(REPORT_FIXTURE)/results.json $(REPORT_FIXTURE)/interop.json \
    $(REPORT_CHECK_DIR)/bench.json $(REPORT_FIXTURE)/fuzz.json -o $(1) $(2)

report-check: $(CHROMIUM) | $(VENV_STAMP)
	@mkdir -p $(REPORT_CHECK_DIR)
	@$(call report_fixture,$(REPORT_CHECK_DIR)/index.html,--baseline $(REPORT_FIXTURE)/baseline.json)
	@$(REPORT_CHECK_PY) --html $(REPORT_CHECK_DIR)/index.html \
	  --results $(REPORT_FIXTURE)/results.json --interop $(REPORT_FIXTURE)/interop.json \
	  $(REPORT_HOSTILE_ARGS) --baseline \
	  --dom $(REPORT_CHECK_DIR)/dom.html --screenshot $(REPORT)/report-check.png
	@if [ -f $(REPORT)/results.json ]; then \
	  $(MAKE) --no-print-directory report REPORT_FUZZ= && \
	  $(REPORT_CHECK_PY) --html $(REPORT)/index.html --results $(REPORT)/results.json \
	    $(if $(wildcard $(REPORT)/interop.json),--interop $(REPORT)/interop.json) \
	    --screenshot $(REPORT)/index.png; \
	fi

report-screenshot: $(CHROMIUM) | $(VENV_STAMP)
	@mkdir -p $(REPORT_CHECK_DIR)
	@$(call report_fixture,$(REPORT_CHECK_DIR)/readme.html,)
	$(REPORT_CHECK_PY) --html $(REPORT_CHECK_DIR)/readme.html \
	  --results $(REPORT_FIXTURE)/results.json --interop $(REPORT_FIXTURE)/interop.json \
	  --screenshot docs/report.png --palette

bench-report: | $(VENV_STAMP)
	@mkdir -p $(REPORT)
	@$(MAKE) --no-print-directory bench >$(REPORT)/bench.txt; rc=$$?; cat $(REPORT)/bench.txt; \
	  [ $$rc = 0 ] && $(VENV_PY) harness/report/bench_text.py $(REPORT)/bench.txt -o $(REPORT)/bench.json
	@if [ -f $(REPORT)/results.json ]; then $(MAKE) --no-print-directory report; \
	  else echo "bench figures in $(REPORT)/bench.json; no $(REPORT)/results.json for a page"; fi

THIRD_PARTIES_PY = $(VENV_PY) harness/report/third_parties.py --readme README.md \
  $(foreach t,$(THIRD_PARTIES),--adapter $(t)) --interop $(INTEROP_REPORT) \
  --torch-summary $(TORCH_SUMMARY)

.PHONY: third-party-table third-party-table-check
third-party-table: $(PYTHON_EXT) $(TSM_CTS) | $(VENV_STAMP)
	@for target in $(foreach t,$(THIRD_PARTIES),$(word 2,$(subst :, ,$(t)))) interop; do \
	  echo "third-party-table: make $$target"; \
	  $(MAKE) --no-print-directory $$target >$(B)/third-party-$$target.log 2>&1 || \
	    echo "third-party-table: make $$target failed (see $(B)/third-party-$$target.log);" \
	      "its counts go in the table"; \
	done
	@$(THIRD_PARTIES_PY)

third-party-table-check: | $(VENV_STAMP)
	@$(THIRD_PARTIES_PY) --check
