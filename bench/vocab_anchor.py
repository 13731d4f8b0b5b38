"""HF `tokenizers` side of `nextok bench vocab`: load time and one-thread
encode throughput on the same corpus, with a checksum of the ids so the run
also shows whether both produced the same tokens.

usage: vocab_anchor.py TOKENIZER_DIR CORPUS_JSONL LOADS ENCODE_REPS
"""
import json
import os
import statistics
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tokenizers import Tokenizer  # noqa: E402

MASK = (1 << 64) - 1


def checksum(all_ids):
    h = 0xCBF29CE484222325
    for ids in all_ids:
        for i in ids:
            h = ((h ^ i) * 0x100000001B3) & MASK
        h = ((h ^ 0xFFFF) * 0x100000001B3) & MASK
    return f"{h:016x}"


def main():
    tok_dir, corpus_path, loads, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    path = os.path.join(tok_dir, "tokenizer.json")
    times = []
    for _ in range(loads):
        t0 = time.perf_counter()
        tok = Tokenizer.from_file(path)
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"bench": "vocab", "impl": "hf-tokenizers", "phase": "tokenizer_load",
                      "median_ms": statistics.median(times), "iters": loads}), flush=True)
    docs = [json.loads(line) for line in open(corpus_path, encoding="utf-8") if line.strip()]
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    times = []
    out = None
    for _ in range(reps + 1):
        t0 = time.perf_counter()
        out = [tok.encode(d, add_special_tokens=False).ids for d in docs]
        times.append((time.perf_counter() - t0) * 1e3)
    med = statistics.median(times[1:])
    print(json.dumps({"bench": "vocab", "impl": "hf-tokenizers", "phase": "encode", "median_ms": med,
                      "mb_per_s": nbytes / (med * 1e3), "bytes": nbytes, "docs": len(docs),
                      "ids": sum(len(x) for x in out), "ids_checksum": checksum(out)}), flush=True)


if __name__ == "__main__":
    main()
