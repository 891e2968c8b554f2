package dev.kvtier.bench;
import org.openjdk.jmh.annotations.*;
public class SmokeBench { @Benchmark public int nothing() { return 1; } }
