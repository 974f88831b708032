"""An MPI program, unchanged: every rank contributes rank + 1, and an allreduce sums them.

Run by mpirun over the gang's hostfile (job.yaml); rank 0 prints the sum and the gang member
each rank ran in (PACELINE_INSTANCE_ID: a rank started through exec is in that member's
environment), and exits 1 when the sum is not n(n+1)/2.
"""

import os
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
instances = comm.gather(os.environ.get("PACELINE_INSTANCE_ID", "?"), root=0)
if rank == 0:
    expected = size * (size + 1) // 2
    print(f"allreduce: size {size} sum {total} expected {expected}")
    print(f"ranks in instances: {','.join(instances)}")
    sys.stdout.flush()
    sys.exit(0 if total == expected else 1)
