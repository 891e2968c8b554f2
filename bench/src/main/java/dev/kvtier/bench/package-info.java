/** The workload simulator, the JMH suite and the GPU check. */
package dev.kvtier.bench;
