# mutants.mk: the mutant catalog, ci/mutants/NNN-name.patch, each a real bug put into
# impl/ (ci/mutants/README.md), against four kill sources (ci/mutants.sh): the case
# library, the combination generator (tsm-cts combos), the scenario fuzz target's
# standalone driver, and the same on an ASan+UBSan build (clang) of the judge and the
# mutated reference. Every mutant must apply, build and be killed by one of them.
#
#   make mutants        the kill matrix: every source on every mutant (and on pending/)
#   make mutants-gate   per mutant the sources in order, each stopping at its first kill
#                       (cases: the family's folders first); a lane of make check
#
# Both reuse $(B)'s impl objects, its judge and its scenario driver, and build each
# mutant without CUDA in a scratch folder; the tree is not written, and of $(B) only
# $(B)/mutants-asan (the ASan tools, built when a mutant first needs them). Include
# after impl.mk and harness.mk.

.PHONY: mutants mutants-gate
mutants: $(TSM_CTS) $(TSMREF_ADAPTER) $(B)/fuzz/bin/scenario
	BUILD="$(B)" CC="$(CC)" bash ci/mutants.sh --matrix

mutants-gate: $(TSM_CTS) $(TSMREF_ADAPTER) $(B)/fuzz/bin/scenario
	BUILD="$(B)" CC="$(CC)" bash ci/mutants.sh --gate
