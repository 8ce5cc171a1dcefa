# mutants.mk: the mutant catalog, ci/mutants/NNN-name.patch, each a real bug put into
# impl/, against the case library (ci/mutants.sh). Every mutant must apply, build and be
# killed by a case that passes on the reference.
#
#   make mutants        the kill matrix: every mutant against the whole library
#   make mutants-gate   fail-fast per mutant, its family's cases first (a lane of make check)
#
# Both reuse $(B)'s impl objects and its judge, and build each mutant without CUDA in a
# scratch folder; the tree and $(B) are not written. Include after impl.mk and harness.mk.

.PHONY: mutants mutants-gate
mutants: $(TSM_CTS) $(TSMREF_ADAPTER)
	BUILD="$(B)" CC="$(CC)" bash ci/mutants.sh --matrix

mutants-gate: $(TSM_CTS) $(TSMREF_ADAPTER)
	BUILD="$(B)" CC="$(CC)" bash ci/mutants.sh --gate
