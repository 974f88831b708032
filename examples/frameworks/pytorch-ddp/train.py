#!/usr/bin/env python3
"""Data-parallel training with PyTorch DDP, written for torchrun and run unchanged on Paceline.

Nothing here knows Paceline: init_process_group("gloo") reads MASTER_ADDR, MASTER_PORT, RANK and
WORLD_SIZE from the environment, which Paceline's `gang.rendezvous: pytorch` sets as torchrun
does. A small model learns a linear map from synthetic data; rank 0 saves a checkpoint to a
directory every rank sees every few steps, and a restarted gang resumes from the newest one.

At the end each rank prints its evaluation loss and a checksum of its parameters: replicas that
stayed in step have the same checksum. With --out-dir, each rank also writes them as JSON
(result-RANK.json), with its timings (timing-RANK.json: the process's start, the end of its
imports, and the moment it was past init_process_group, in Unix seconds) and its PID (pid-RANK),
for tests and benchmarks.
"""

import time

STARTED = time.time()  # before the imports: torch's takes seconds

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

IMPORTED = time.time()

FEATURES = 8
BATCH = 32


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=60, help="training steps in all")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--checkpoint-dir", default=os.environ.get("CHECKPOINT_DIR", ""),
                   help="shared directory of checkpoints (default: $CHECKPOINT_DIR; none: off)")
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--step-delay", type=float, default=0.0,
                   help="seconds to sleep after each step (to watch a run, or to fail one)")
    p.add_argument("--out-dir", default=os.environ.get("OUT_DIR", ""),
                   help="directory for result-RANK.json, timing-RANK.json and pid-RANK")
    return p.parse_args()


def write_atomically(path, write):
    tmp = f"{path}.tmp.{os.getpid()}"
    write(tmp)
    os.replace(tmp, path)


def write_json(path, value):
    def write(tmp):
        with open(tmp, "w") as f:
            json.dump(value, f)
    write_atomically(path, write)


def latest_checkpoint(directory):
    """The step of the newest complete checkpoint in `directory`, or 0."""
    if not directory or not os.path.isdir(directory):
        return 0
    steps = [int(n[len("step-"):-len(".pt")]) for n in os.listdir(directory)
             if n.startswith("step-") and n.endswith(".pt")]
    return max(steps, default=0)


def batch(step, rank, world, true_w):
    """This rank's shard of step `step`: the same on every run, restarted or not."""
    g = torch.Generator().manual_seed(1000003 * step + rank + 7919 * world)
    x = torch.randn(BATCH, FEATURES, generator=g)
    y = x @ true_w + 0.01 * torch.randn(BATCH, 1, generator=g)
    return x, y


def checksum(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def main():
    args = parse_args()
    rank_env = os.environ.get("RANK", "?")
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        with open(os.path.join(args.out_dir, f"pid-{rank_env}"), "w") as f:
            f.write(f"{os.getpid()}\n")

    dist.init_process_group("gloo")  # env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
    past_init = time.time()
    rank, world = dist.get_rank(), dist.get_world_size()
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    print(f"rank {rank}/{world} (local rank {os.environ.get('LOCAL_RANK')}) joined "
          f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}, restart {restart}, "
          f"{past_init - STARTED:.2f}s after start", flush=True)
    if args.out_dir:
        write_json(os.path.join(args.out_dir, f"timing-{rank}.json"),
                   {"rank": rank, "started": STARTED, "imported": IMPORTED,
                    "past_init": past_init, "restart": restart})

    torch.manual_seed(0)
    true_w = torch.linspace(-1.0, 1.0, FEATURES).reshape(FEATURES, 1)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    # Every rank resumes from the step rank 0 found, so that they agree on it.
    start = torch.tensor([latest_checkpoint(args.checkpoint_dir) if rank == 0 else 0])
    dist.broadcast(start, src=0)
    start = int(start.item())
    if start > 0:
        state = torch.load(os.path.join(args.checkpoint_dir, f"step-{start}.pt"))
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        print(f"rank {rank}: resumed from step {start}", flush=True)
    ddp = DistributedDataParallel(model)  # broadcasts rank 0's parameters

    loss_fn = torch.nn.MSELoss()
    loss = torch.tensor(0.0)
    for step in range(start + 1, args.steps + 1):
        x, y = batch(step, rank, world, true_w)
        optimizer.zero_grad()
        loss = loss_fn(ddp(x), y)
        loss.backward()  # gradients averaged over the ranks
        optimizer.step()
        if step % 10 == 0 or step == args.steps:
            print(f"rank {rank}: step {step} loss {loss.item():.5f}", flush=True)
        if args.checkpoint_dir and rank == 0 and step % args.checkpoint_every == 0:
            os.makedirs(args.checkpoint_dir, exist_ok=True)
            state = {"step": step, "model": model.state_dict(),
                     "optimizer": optimizer.state_dict()}
            write_atomically(os.path.join(args.checkpoint_dir, f"step-{step}.pt"),
                             lambda tmp: torch.save(state, tmp))
        if args.step_delay > 0:
            time.sleep(args.step_delay)

    g = torch.Generator().manual_seed(424242)
    x_eval = torch.randn(512, FEATURES, generator=g)
    with torch.no_grad():
        eval_loss = loss_fn(model(x_eval), x_eval @ true_w).item()
    sum_ = checksum(model)
    print(f"rank {rank}: final loss {eval_loss:.6f} checksum {sum_}", flush=True)
    if args.out_dir:
        write_json(os.path.join(args.out_dir, f"result-{rank}.json"),
                   {"rank": rank, "world": world, "loss": eval_loss, "checksum": sum_,
                    "resumed_from": start, "restart": restart, "steps": args.steps})
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
