#!/usr/bin/env bash
# bench/fuzz_ttf.sh [--build DIR] [PATCH...]: time to find each mutant of the catalog
# (ci/mutants/*.patch and ci/mutants/pending/*.patch) with the scenario fuzz target's
# standalone driver alone, from an empty corpus: ci/mutants.sh --ttf builds each mutant
# and runs the scenario campaign against it (-runs/-seed/-save; a finding whose input
# also fails on the unmutated reference is a known finding and the campaign goes on with
# the next seed) until a finding of the mutant's own, or the cap. The target runs as two
# workers side by side (two cores): the plain driver, and the ASan+UBSan driver against
# the ASan-built mutant once that is built (its build counts in the time; TTF_ASAN=0
# leaves it out); the first finding wins.
#
#   TTF_CAP    seconds per run (default 60)
#   TTF_SEEDS  the first seed of each run (default "1 1001 2001": three runs per mutant)
#
# Writes DIR/bench/fuzz-ttf.json (per mutant and run: found, seconds, the finding; and
# the distribution over the runs: median, p90, max, the share found) and
# DIR/bench/fuzz-ttf.md (the same as a table), and prints the table.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=build
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
cap=${TTF_CAP:-60}
seeds=${TTF_SEEDS:-"1 1001 2001"}
out=$BUILD/bench
mkdir -p "$out"
start=$SECONDS
TTF_SEEDS="$seeds" bash ci/mutants.sh --ttf "$cap" --build "$BUILD" "${args[@]}" \
  | tee "$out/fuzz-ttf.log" | grep '^ttf ' >&2
python3 - "$out/fuzz-ttf.log" "$out/fuzz-ttf.json" "$out/fuzz-ttf.md" "$cap" "$seeds" \
  "$((SECONDS - start))" <<'EOF'
import json, os, sys
log, js, md, cap, seeds, wall = sys.argv[1:7]
cap = float(cap)
runs = {}
for line in open(log):
    if not line.startswith('ttf '):
        continue
    _, ident, seed, secs, detail = (line.rstrip('\n').split(' ', 4) + [''])[:5]
    found = secs != '-'
    runs.setdefault(ident, []).append({'first_seed': int(seed), 'found': found,
                                       'seconds': float(secs) if found else None,
                                       'detail': detail})
def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    k = max(0, min(len(xs) - 1, int(round(q * (len(xs) - 1)))))
    return xs[k]
times = [r['seconds'] for rs in runs.values() for r in rs if r['found']]
by_asan = sum(1 for rs in runs.values() for r in rs if r['found'] and r['detail'].startswith('asan: '))
n_runs = sum(len(rs) for rs in runs.values())
found_any = [m for m, rs in runs.items() if any(r['found'] for r in rs)]
not_found = sorted(m for m in runs if m not in found_any)
summary = {'mutants': len(runs), 'runs': n_runs, 'runs_found': len(times),
           'mutants_found': len(found_any),
           'share_found': round(len(found_any) / len(runs), 3) if runs else None,
           'median_s': pct(times, 0.5), 'p90_s': pct(times, 0.9),
           'max_s': max(times) if times else None, 'found_by_asan_worker': by_asan,
           'not_found': not_found}
doc = {'bench': 'fuzz-ttf', 'target': 'scenario',
       'engine': 'standalone, plain and ASan+UBSan side by side',
       'cap_s': cap, 'first_seeds': [int(s) for s in seeds.split()],
       'wall_s': int(wall), 'summary': summary,
       'mutants': [{'id': m, 'pending': m.startswith('pending/'), 'runs': rs}
                   for m, rs in sorted(runs.items())]}
json.dump(doc, open(js, 'w'), indent=1)
with open(md, 'w') as f:
    f.write('| mutant | ' + ' | '.join('seed %s' % s for s in seeds.split()) + ' |\n')
    f.write('|---|' + '---|' * len(seeds.split()) + '\n')
    for m, rs in sorted(runs.items()):
        f.write('| %s | %s |\n' % (m, ' | '.join(
            '%.1f s' % r['seconds'] if r['found'] else 'not in %d s' % cap for r in rs)))
    f.write('\n%d mutants, %d runs: found %d of %d runs; %d mutants found in at least one '
            'run (%.1f%%); time to find over the runs that found: median %s s, p90 %s s, '
            'max %s s; %d of the findings by the ASan+UBSan worker\n' % (
                len(runs), n_runs, len(times), n_runs, len(found_any),
                100 * (summary['share_found'] or 0), summary['median_s'],
                summary['p90_s'], summary['max_s'], by_asan))
    if not_found:
        f.write('not found: %s\n' % ', '.join(not_found))
print(open(md).read(), end='')
EOF
