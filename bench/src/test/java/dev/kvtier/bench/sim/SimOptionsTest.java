package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.kvtier.Backend;

class SimOptionsTest {

    @Test
    void noArgumentsGiveTheDefaults() throws Exception {
        SimOptions o = SimOptions.parse();
        assertEquals(SimOptions.defaults(), o);
        assertEquals(ModelShape.TINY, o.model());
        assertEquals(1024, o.model().bytesPerToken());
        assertEquals(PolicyChoice.ADAPTIVE_S3_FIFO_LFU, o.policy());
        assertEquals(Backend.AUTO, o.backend());
        assertEquals(Optional.empty(), o.diskDirectory());
        assertFalse(o.sweep());
    }

    @Test
    void everyOptionParsesInBothSpellings() throws Exception {
        SimOptions spaced = SimOptions.parse("--model", "llama-3.1-8b", "--sessions", "7", "--requests", "99",
                "--turn-tokens", "16..64", "--max-turns", "3", "--zipf", "0.8", "--seed", "-5", "--threads", "4",
                "--max-seconds", "30", "--gpu-budget", "64MiB", "--cpu-budget", "30%", "--disk-dir", "/tmp/d",
                "--page-size", "4KiB", "--policy", "lru", "--backend", "host", "--verify", "full",
                "--progress", "off", "--sweep", "--sweep-steps", "4", "--sweep-policies", "lru", "--out", "/tmp/o");
        SimOptions equals = SimOptions.parse("--model=llama-3.1-8b", "--sessions=7", "--requests=99",
                "--turn-tokens=16..64", "--max-turns=3", "--zipf=0.8", "--seed=-5", "--threads=4",
                "--max-seconds=30", "--gpu-budget=64MiB", "--cpu-budget=30%", "--disk-dir=/tmp/d",
                "--page-size=4KiB", "--policy=LRU", "--backend=host", "--verify=full", "--progress=off", "--sweep",
                "--sweep-steps=4", "--sweep-policies=lru", "--out=/tmp/o");
        assertEquals(spaced, equals);
        assertEquals(ModelShape.LLAMA_3_1_8B, spaced.model());
        assertEquals(131072, spaced.model().bytesPerToken());
        assertEquals(7, spaced.sessions());
        assertEquals(99, spaced.requests());
        assertEquals(new TurnLengths.Uniform(16, 64), spaced.turnLengths());
        assertEquals(3, spaced.maxTurns());
        assertEquals(0.8, spaced.zipfExponent());
        assertEquals(-5, spaced.seed());
        assertEquals(4, spaced.threads());
        assertEquals(30, spaced.maxSeconds());
        assertEquals(new Budget.Bytes(64L << 20), spaced.gpuBudget());
        assertEquals(new Budget.ShareOfWorkingSet(0.30), spaced.cpuBudget());
        assertEquals(Optional.of(Path.of("/tmp/d")), spaced.diskDirectory());
        assertEquals(4096, spaced.pageSizeBytes());
        assertEquals(PolicyChoice.LRU, spaced.policy());
        assertEquals(Backend.HOST, spaced.backend());
        assertEquals(SimOptions.VerifyMode.FULL, spaced.verify());
        assertEquals(SimOptions.ProgressMode.OFF, spaced.progress());
        assertTrue(spaced.sweep());
        assertEquals(4, spaced.sweepSteps());
        assertEquals(List.of(PolicyChoice.LRU), spaced.sweepPolicies());
        assertEquals(Path.of("/tmp/o"), spaced.outDirectory());
    }

    @Test
    void shapeOverridesMakeACustomModel() throws Exception {
        SimOptions o = SimOptions.parse("--model", "llama-3.1-70b", "--layers", "4", "--dtype-bytes", "1");
        assertEquals(4, o.model().layers());
        assertEquals(8, o.model().kvHeads());
        assertEquals(128, o.model().headDim());
        assertEquals(1, o.model().dtypeBytes());
        assertEquals(2L * 4 * 8 * 128, o.model().bytesPerToken());
        assertTrue(o.model().name().contains("custom"), o.model().name());
        assertEquals(ModelShape.LLAMA_3_1_70B, SimOptions.parse("--model", "Llama-3.1-70B").model());
        assertEquals(327680, ModelShape.LLAMA_3_1_70B.bytesPerToken());
    }

    @Test
    void turnLengthDistributions() throws Exception {
        assertEquals(new TurnLengths.Fixed(256), SimOptions.parse("--turn-tokens", "256").turnLengths());
        TurnLengths logNormal = SimOptions.parse("--turn-tokens", "lognormal:200,1.0").turnLengths();
        assertEquals(new TurnLengths.LogNormal(200, 1.0, 3200), logNormal);
        assertEquals(new TurnLengths.LogNormal(200, 0.5, 1000),
                SimOptions.parse("--turn-tokens=lognormal:200,0.5,1000").turnLengths());
        java.util.SplittableRandom random = new java.util.SplittableRandom(1);
        for (int i = 0; i < 10_000; i++) {
            int t = logNormal.sample(random);
            assertTrue(t >= 1 && t <= 3200, "sample " + t);
        }
    }

    @Test
    void sizesAndBudgets() {
        assertEquals(4096, ByteSizes.parse("4096"));
        assertEquals(512 * 1024, ByteSizes.parse("512KiB"));
        assertEquals(64L << 20, ByteSizes.parse("64M"));
        assertEquals(3L << 29, ByteSizes.parse("1.5GiB"));
        assertEquals(64_000_000, ByteSizes.parse("64MB"));
        assertEquals("1.5 GiB", ByteSizes.format(3L << 29));
        assertEquals("512 B", ByteSizes.format(512));
        assertEquals(250, Budget.parse("25%").resolve(1000));
        assertEquals(1, Budget.parse("0.01%").resolve(10));
        assertEquals("25%", Budget.parse("25%").spec());
        assertThrows(IllegalArgumentException.class, () -> ByteSizes.parse("12XB"));
        assertThrows(IllegalArgumentException.class, () -> ByteSizes.parse("-1"));
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
            "--sessions     | 0          | a whole number from 1",
            "--sessions     | many       | a whole number from 1",
            "--requests     | -3         | a whole number from 1",
            "--gpu-budget   | 64XB       | unknown unit 'XB'",
            "--gpu-budget   | 0          | budget must be positive",
            "--cpu-budget   | lots%      | percentage",
            "--turn-tokens  | 512..32    | max 32 is below min 512",
            "--turn-tokens  | ten        | expected N, MIN..MAX",
            "--turn-tokens  | 0          | between 1 and",
            "--page-size    | 1000       | power of two",
            "--policy       | fifo       | one of lfu, lru",
            "--backend      | opencl     | one of auto, cuda, host",
            "--verify       | sometimes  | one of checksum, full",
            "--model        | gpt-5      | one of tiny, llama-3.1-8b",
            "--zipf         | -1         | a number from 0.0 to 10.0",
            "--seed         | 1.5        | a whole number",
            "--threads      | 0          | a whole number from 1",
            "--sweep-policies | lfu,mru  | one of lfu, lru",
    })
    void badValuesNameTheOptionAndTheValue(String option, String value, String expected) {
        UsageException e = assertThrows(UsageException.class, () -> SimOptions.parse(option, value));
        assertTrue(e.getMessage().contains(option), e.getMessage());
        assertTrue(e.getMessage().contains("'" + value + "'"), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        UsageException same = assertThrows(UsageException.class, () -> SimOptions.parse(option + "=" + value));
        assertEquals(e.getMessage(), same.getMessage());
    }

    @Test
    void theSweepWritesUnderTargetUnlessToldWhere() {
        assertEquals(Path.of("target"), SimOptions.defaults().outDirectory(), "never over the tracked bench/results");
    }

    @Test
    void unknownOptionsMissingValuesAndStrayArguments() {
        assertEquals("unknown option --colour",
                assertThrows(UsageException.class, () -> SimOptions.parse("--colour", "red")).getMessage());
        assertEquals("unknown option --colour",
                assertThrows(UsageException.class, () -> SimOptions.parse("--colour=red")).getMessage());
        assertEquals("option --requests needs a value",
                assertThrows(UsageException.class, () -> SimOptions.parse("--requests")).getMessage());
        assertTrue(assertThrows(UsageException.class, () -> SimOptions.parse("requests")).getMessage()
                .contains("'requests'"));
    }

    @Test
    void segmentsOverTwoGibibytesAreRefused() {
        UsageException e = assertThrows(UsageException.class,
                () -> SimOptions.parse("--model", "llama-3.1-70b", "--turn-tokens", "8192"));
        assertTrue(e.getMessage().contains("--turn-tokens 8192"), e.getMessage());
    }

    @Test
    void usageMentionsEveryOption() {
        String usage = SimOptions.usage();
        for (String option : List.of("--model", "--layers", "--kv-heads", "--head-dim", "--dtype-bytes", "--sessions",
                "--requests", "--turn-tokens", "--max-turns", "--zipf", "--seed", "--threads", "--max-seconds",
                "--gpu-budget", "--cpu-budget", "--disk-dir", "--page-size", "--policy", "--backend", "--verify",
                "--progress", "--sweep", "--sweep-steps", "--sweep-policies", "--out", "--help", "--workload",
                "--trace", "--generate-trace", "--block-bytes", "--sweep-budgets")) {
            assertTrue(usage.contains(option), option);
        }
        // picocli formats descriptions with String.format: a lone % would print the raw text with a warning.
        assertTrue(usage.contains("(default 25%)") && usage.contains("2%,5%,10%") && !usage.contains("%%"), usage);
    }

    @Test
    void traceOptions() throws Exception {
        SimOptions o = SimOptions.parse("--workload", "trace", "--trace", "/tmp/t.jsonl", "--block-bytes", "16KiB",
                "--sweep-budgets", "2%,5%,64MiB");
        assertEquals(SimOptions.WorkloadKind.TRACE, o.workload());
        assertEquals(Optional.of(Path.of("/tmp/t.jsonl")), o.trace());
        assertEquals(Optional.empty(), o.generateTrace());
        assertEquals(16384, o.blockBytes());
        assertEquals(List.of(new Budget.ShareOfWorkingSet(0.02), new Budget.ShareOfWorkingSet(0.05),
                new Budget.Bytes(64L << 20)), o.sweepBudgets());
        assertEquals(16384, o.effectivePageSizeBytes(), "a trace's pages are its blocks");
        assertEquals(4096, SimOptions.parse("--workload=TRACE", "--generate-trace=doc-qa").effectivePageSizeBytes());
        assertEquals(512, SimOptions.parse("--workload=trace", "--generate-trace=chat", "--block-bytes=100").effectivePageSizeBytes());
        assertEquals(65536, SimOptions.parse("--workload=trace", "--generate-trace=chat", "--block-bytes=1MiB").effectivePageSizeBytes());
        assertEquals(8192, SimOptions.parse("--workload=trace", "--generate-trace=chat", "--page-size=8KiB").effectivePageSizeBytes());
        assertEquals(512 * 1024, SimOptions.parse("--workload=trace", "--generate-trace=chat", "--block-bytes=model").blockBytes(),
                "512 tokens of the tiny model's 1 KiB");
        assertEquals(64 << 20, SimOptions.parse("--block-bytes", "Model", "--model", "llama-3.1-8b", "--workload=trace",
                "--generate-trace=chat").blockBytes());
        assertTrue(assertThrows(UsageException.class, () -> SimOptions.parse("--block-bytes", "model", "--model",
                "llama-3.1-70b", "--layers", "1024", "--workload=trace", "--generate-trace=chat")).getMessage()
                .contains("at most 256 MiB"));
        assertEquals(65536, SimOptions.defaults().effectivePageSizeBytes());
        assertEquals(4096, SimOptions.defaults().blockBytes());
        assertEquals(SimOptions.WorkloadKind.CHAT, SimOptions.defaults().workload());
        SimOptions generate = SimOptions.parse("--generate-trace", "Tool-Agent", "--trace", "/tmp/g.jsonl");
        assertEquals(Optional.of(dev.kvtier.bench.trace.TraceGenerator.Kind.TOOL_AGENT), generate.generateTrace());
        assertEquals(SimOptions.WorkloadKind.CHAT, generate.workload());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "--workload trace                     | --workload trace needs --trace FILE",
            "--trace t.jsonl                      | --trace t.jsonl is read only with --workload trace",
            "--generate-trace chat                | --generate-trace chat needs --trace FILE to write the trace to, or --workload trace",
            "--workload list                      | bad value for --workload: 'list' (expected one of chat, trace)",
            "--generate-trace poems --trace x     | bad value for --generate-trace: 'poems' (expected one of chat, tool-agent, doc-qa, chat-sessions, conversation, agent-loop, doc-qa-long, burst-chat, stress)",
            "--block-bytes 8                      | bad value for --block-bytes: '8' (expected a size between 16 B and 256 MiB, or",
            "--sweep-budgets 5%,0                 | bad value for --sweep-budgets: '5%,0' (a comma-separated list of budgets; '0': budget must be positive",
    })
    void badTraceOptions(String commandLine, String expected) {
        UsageException e = assertThrows(UsageException.class, () -> SimOptions.parse(commandLine.split(" ")));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }

    @Test
    void warmupRequestsParseInBothSpellingsAndDefaultToNone() throws Exception {
        assertEquals(0, SimOptions.defaults().warmupRequests(), "a cold JVM unless asked");
        SimOptions spaced = SimOptions.parse("--workload", "trace", "--generate-trace", "doc-qa", "--seed", "7",
                "--warmup-requests", "20_000");
        assertEquals(spaced, SimOptions.parse("--workload=trace", "--generate-trace=doc-qa", "--seed=7",
                "--warmup-requests=20000"));
        assertEquals(20_000, spaced.warmupRequests());
        assertEquals(0, SimOptions.parse("--workload", "trace", "--generate-trace", "chat", "--warmup-requests", "0")
                .warmupRequests());
        assertTrue(SimOptions.usage().contains("--warmup-requests"), SimOptions.usage());

        SimOptions warm = spaced.forWarmUp();
        assertEquals(20_000, warm.requests(), "the warm-up plays N requests");
        assertEquals(8, warm.seed(), "of another trace than the measured one");
        assertEquals(0, warm.warmupRequests(), "and warms nothing itself");
        assertEquals(Optional.empty(), warm.diskDirectory());
        assertEquals(Optional.empty(), warm.jfr());
        assertEquals(SimOptions.ProgressMode.OFF, warm.progress());
        assertEquals(spaced.generateTrace(), warm.generateTrace());
        assertEquals(spaced.gpuBudget(), warm.gpuBudget());
        assertEquals(spaced.cpuBudget(), warm.cpuBudget());
        assertEquals(spaced.policy(), warm.policy());
        assertEquals(spaced.traceApi(), warm.traceApi());
        assertEquals(spaced.effectivePageSizeBytes(), warm.effectivePageSizeBytes());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "--warmup-requests -1                                              | bad value for --warmup-requests: '-1' (expected a whole number from 0 to 100000000)",
            "--warmup-requests 100000001                                       | bad value for --warmup-requests: '100000001' (expected a whole number from 0 to 100000000)",
            "--warmup-requests many                                            | bad value for --warmup-requests: 'many' (expected a whole number from 0 to 100000000)",
            "--warmup-requests                                                 | option --warmup-requests needs a value",
            "--warmup-requests 10                                              | --warmup-requests 10 warms the JVM before one trace run in this process: it needs --workload trace",
            "--warmup-requests 10 --workload trace --generate-trace chat --sweep | --warmup-requests 10 warms the JVM before one trace run",
            "--warmup-requests 10 --workload trace --generate-trace chat --ranks 2 | --warmup-requests 10 warms the JVM before one trace run",
    })
    void badWarmupRequests(String commandLine, String expected) {
        UsageException e = assertThrows(UsageException.class, () -> SimOptions.parse(commandLine.trim().split(" +")));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }

    @Test
    void theLastValueOfARepeatedOptionCounts() throws Exception {
        assertEquals(9, SimOptions.parse("--sessions", "3", "--sessions=9").sessions());
        assertEquals(1_000_000, SimOptions.parse("--requests", "1_000_000").requests());
    }
}
