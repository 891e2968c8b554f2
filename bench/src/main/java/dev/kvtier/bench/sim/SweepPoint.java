package dev.kvtier.bench.sim;

/**
 * One run of the sweep.
 *
 * @param policy         the policy
 * @param requestedShare the GPU budget asked for, as a share of the peak working set
 * @param result         the run (its settings hold the GPU budget actually used: never below the largest segment)
 */
public record SweepPoint(PolicyChoice policy, double requestedShare, RunResult result) {

    /** The GPU budget used, as a share of the peak working set. */
    public double gpuShare() {
        long peak = result.workload().peakLiveBytes();
        return peak == 0 ? 0 : (double) result.settings().gpuBudgetBytes() / peak;
    }
}
