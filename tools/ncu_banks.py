"""`make profile-05`: turn ncu's CSV for step 05's bank_patterns launches into
results/ncu_banks_<gpu>.csv: one row per access pattern with ncu's
shared-load wavefronts per LDS instruction (1 = conflict-free, 32 = 32-way).

    python3 tools/ncu_banks.py build/profile-05.csv results/ "NVIDIA H200"
"""

import csv
import io
import pathlib
import re
import sys

PATTERNS = ["row", "column", "column_padded", "column_swizzled"]  # launch order in 05_swizzle/swizzle.cu


def main() -> int:
    src, out_dir, gpu = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
    text = src.read_text()
    start = text.find('"ID"')
    if start < 0:
        print(f"no ncu table in {src}")
        return 1
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    by_launch: dict[str, dict[str, float]] = {}
    for r in rows:
        by_launch.setdefault(r["ID"], {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    launches = [by_launch[k] for k in sorted(by_launch, key=int)]
    if len(launches) != len(PATTERNS):
        print(f"expected {len(PATTERNS)} bank_patterns launches, found {len(launches)}")
        return 1
    out = out_dir / ("ncu_banks_" + re.sub(r"[^A-Za-z0-9.-]+", "_", gpu).strip("_") + ".csv")
    with out.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["pattern", "lds_instructions", "wavefronts", "bank_conflicts", "wavefronts_per_lds"])
        for name, m in zip(PATTERNS, launches):
            lds = m["smsp__sass_inst_executed_op_shared_ld.sum"]
            wav = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
            w.writerow([name, int(lds), int(wav), int(m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]),
                        f"{wav / lds:.2f}"])
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
