package dev.kvtier.bench.sim;

import java.util.List;
import java.util.Locale;

import dev.kvtier.store.Tier;

/** Renders sweep points as CSV (RFC 4180, header row, one row per point, {@code \n} line ends). Stateless. */
final class SweepCsv {
    private SweepCsv() {
    }

    static String render(List<SweepPoint> points) {
        StringBuilder sb = new StringBuilder();
        sb.append("policy,gpu_budget_share,gpu_budget_bytes,cpu_budget_bytes,peak_working_set_bytes,requests,"
                + "resident_calls,on_gpu_share,from_cpu_share,from_disk_share,ttr_p50_us,ttr_p99_us,ttr_p999_us");
        for (Tier from : Tier.values()) {
            for (Tier to : Tier.values()) {
                if (from != to) {
                    sb.append(',').append(name(from)).append("_to_").append(name(to)).append("_bytes");
                }
            }
        }
        sb.append(",transfers,bytes_verified,failures,wall_s\n");
        for (SweepPoint p : points) {
            RunResult r = p.result();
            sb.append(String.format(Locale.ROOT, "%s,%.4f,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.1f,%.1f,%.1f",
                    p.policy().optionValue(), p.gpuShare(), r.settings().gpuBudgetBytes(), r.settings().cpuBudgetBytes(),
                    r.workload().peakLiveBytes(), r.requestsDone(), r.residentCalls(), r.foundOnShare(Tier.GPU),
                    r.foundOnShare(Tier.CPU), r.foundOnShare(Tier.DISK), r.timeToResidentMicros(50),
                    r.timeToResidentMicros(99), r.timeToResidentMicros(99.9)));
            for (Tier from : Tier.values()) {
                for (Tier to : Tier.values()) {
                    if (from != to) {
                        sb.append(',').append(r.counters().bytesMoved(from, to));
                    }
                }
            }
            sb.append(String.format(Locale.ROOT, ",%d,%d,%d,%.3f\n", r.counters().transfers(), r.bytesVerified(),
                    r.failures(), r.playedNanos() / 1e9));
        }
        return sb.toString();
    }

    private static String name(Tier tier) {
        return tier.name().toLowerCase(Locale.ROOT);
    }
}
