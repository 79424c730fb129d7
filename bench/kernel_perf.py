#!/usr/bin/env python3
"""Where a compiled model's time goes inside its kernels, by `perf` samples.

    python3 bench/kernel_perf.py MODEL.tuner [--repeat 300] [--task N] [--tuner build/tuner]

Runs `tuner run MODEL.tuner --repeat N` under `perf record` and maps the samples that fall in
the artifact's kernels to their functions. The runtime loads the kernels from a memfd, so perf
itself names no symbols there; this script reads the shared object out of the artifact
("TUNERMDL", u32 version, then three u64-length-prefixed sections: plan JSON, shared object,
weights; src/runtime/artifact.h) and resolves the addresses with its program headers and `nm`.
Prints each task's share of the kernel samples; with --task, that task's instructions
(`objdump`) with their sample counts, to see whether a padding fill, the multiply-adds or the
stores take the time. Needs perf (Debian package linux-perf) and binutils.
"""
import argparse
import bisect
import collections
import os
import re
import struct
import subprocess
import sys
import tempfile


def shared_object(artifact):
    with open(artifact, "rb") as f:
        data = f.read()
    if data[:8] != b"TUNERMDL":
        sys.exit(f"error: {artifact}: not a Tuner artifact")
    pos = 12
    sections = []
    for _ in range(3):
        (n,) = struct.unpack_from("<Q", data, pos)
        sections.append(data[pos + 8:pos + 8 + n])
        pos += 8 + n
    return sections[1]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifact")
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--task", type=int, help="print this task's instructions with their samples")
    ap.add_argument("--tuner", default=os.path.join(os.path.dirname(__file__), "..", "build", "tuner"))
    a = ap.parse_args()
    for tool in ("perf", "nm", "objdump", "readelf"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"error: {tool} not found (perf: Debian package linux-perf; the others: binutils)")
    with tempfile.TemporaryDirectory(prefix="kernel_perf_") as tmp:  # perf.data runs to 100s of MB
        profile(a, tmp)


def profile(a, tmp):
    so = os.path.join(tmp, "kernels.so")
    with open(so, "wb") as f:
        f.write(shared_object(a.artifact))
    data = os.path.join(tmp, "perf.data")
    run(["perf", "record", "-q", "-o", data, a.tuner, "run", a.artifact, "--repeat", str(a.repeat)])

    # The executable mappings of the kernels' memfd: [start(len) @ pgoff].
    maps = []
    for line in run(["perf", "script", "-i", data, "--show-mmap-events"]).splitlines():
        m = re.search(r"PERF_RECORD_MMAP2.*\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|\d+) .*\]: r-xp .*memfd:tuner-kernels", line)
        if m:
            maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 0)))
    if not maps:
        sys.exit("error: no kernel mapping in the perf data (did the model run?)")
    # File offset -> virtual address, by the shared object's executable segment.
    seg = None
    for line in run(["readelf", "-lW", so]).splitlines():
        p = line.split()
        if p and p[0] == "LOAD" and "E" in p[6:-1]:
            seg = (int(p[1], 16), int(p[2], 16), int(p[4], 16))  # offset, vaddr, filesz
    syms = []
    for line in run(["nm", "-n", so]).splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tT":
            syms.append((int(p[0], 16), p[2]))
    starts = [s for s, _ in syms]

    samples = collections.Counter()
    total = 0
    for line in run(["perf", "script", "-i", data, "-F", "ip"]).splitlines():
        total += 1
        ip = int(line.strip(), 16)
        for start, length, pgoff in maps:
            if start <= ip < start + length:
                off = ip - start + pgoff
                samples[off - seg[0] + seg[1]] += 1
    kernel_total = sum(samples.values())
    print(f"{total} samples, {kernel_total} in kernels ({100 * kernel_total / max(total, 1):.1f} %)")
    by_task = collections.Counter()
    for addr, n in samples.items():
        i = bisect.bisect_right(starts, addr) - 1
        by_task[syms[i][1].split(".")[0] if i >= 0 else "?"] += n
    for name, n in by_task.most_common():
        print(f"  {name:<10} {100 * n / kernel_total:5.1f} %")

    if a.task is not None:
        name = f"task{a.task}"
        own = [(s, e) for (s, n), (e, _) in zip(syms, syms[1:] + [(seg[1] + seg[2], "")])
               if n == name or n.startswith(name + ".")]
        if not own:
            sys.exit(f"error: no kernel {name} in {a.artifact}")
        print(f"\n{name}: {by_task[name]} samples")
        for s, e in own:
            for line in run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={s:#x}",
                             f"--stop-address={e:#x}", so]).splitlines():
                m = re.match(r"\s*([0-9a-f]+):\s*(.*)", line)
                if m:
                    print(f"{samples.get(int(m.group(1), 16), 0):6d}  {m.group(1)}  {m.group(2)}")
                elif line.strip().endswith(">:"):
                    print(line.strip())


if __name__ == "__main__":
    main()
