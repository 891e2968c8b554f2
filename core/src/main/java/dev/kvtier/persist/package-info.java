/**
 * Persistence of the DISK tier (opt-in: {@code KvTierConfig.builder().persistence(DiskPersistence.of(ns))}):
 * the on-disk design, the journal that records it, and its recovery. Only DISK is persistent; the GPU
 * and CPU tiers are volatile, and a segment lives in exactly one tier, so a segment promoted off DISK
 * (or put on GPU/CPU) is gone after a close or crash, and one demoted to DISK is persisted from then on.
 *
 * <h2>Files in the disk directory</h2>
 * <pre>
 * kvtier.lock                    one-owner lock (DiskDirectoryLock); never read as data
 * kvtier.journal                 header (twice), then records: which segment's bytes lie in which pages
 * kvtier.generations             per extent page, the generation of the record whose bytes are there (0: none)
 * kvtier.journal.compacting      a compaction in progress (deleted by the next open: the journal is whole)
 * kvtier-persistent-&lt;n&gt;.extent  extent slot n: the segments' bytes, in pages (page size and extent size
 *                                from the configuration, both recorded in the header)
 * </pre>
 * Extent files are named by their slot in the DISK memory, not by process, so a page coordinate
 * (slot, page) names the same bytes in every process that opens the directory. Unlike a volatile cache,
 * a persistent one keeps its extents on close, and its lock keeps a dead owner's persistent extents
 * (only non-persistent extents are reclaimed). A volatile cache opening the directory deletes the
 * extents; the journal left behind then refers to missing extents and its records are discarded.
 *
 * <h2>Journal layout (all integers little-endian)</h2>
 * <pre>
 * header copy 1 at 0, header copy 2 at 1056: identical, each zero-padded to 1056 bytes
 *   0   u64  magic "KVTJRNL\0"
 *   8   i32  format version (3)
 *   12  i32  page size in bytes
 *   16  i64  extent size in bytes
 *   24  i32  n: namespace length in UTF-8 bytes (at most 1024)
 *   28  n    namespace, UTF-8
 *   28+n i32 CRC32C of bytes [0, 28+n) of this copy
 * record (repeated from 2112 to the end of the file)
 *   0   i32  magic "KVTR" (0x5254564B)
 *   4   i32  L: body length (5 .. 2^20)
 *   8   i32  CRC32C of the body
 *   12  body
 *       0    i8   type: 1 PUT, 2 REMOVE
 *       1    i32  k: key length in UTF-16 code units (lossless for every Java string; the door accepts at
 *                 most 65,536, leaving room for ~76,000 runs in a body)
 *       5    2k   key, UTF-16LE
 *       PUT only, from 5+2k:
 *       +0   i64  generation (&gt; 0): this record's number, unique in the directory, rising with each PUT
 *       +8   i64  first position      +16  i64  end position (exclusive)
 *       +24  i64  size in bytes       +32  i64  access count when it arrived on DISK
 *       +40  i32  CRC32C of the segment's bytes as they were put
 *       +44  i32  r: runs             +48  r x (i32 extent slot, i32 first page, i32 page count)
 *       then, from 5+2k+48+12r:
 *       +0   i8   kind: 0 plain segment, 1 prefix block
 *       +1   i32  p: parent key length in UTF-16 code units; -1 for a plain segment and for the first
 *                 block of a chain (a plain segment must say -1)
 *       +5   2p   parent key, UTF-16LE (a block's body ends here: L = 5+2k+48+12r+5+2max(p,0))
 * </pre>
 * A PUT says "segment K's bytes are in these pages and have this checksum"; a later PUT of K replaces
 * it; a REMOVE ends it. Usage counts are kept as they were when the segment arrived on DISK (touches
 * while it stays there are not recorded): a recovered segment comes back with them, so a frequency
 * policy ranks it as before the restart.
 *
 * <p>Format versions: 3 is written. A journal of version 2 (one header copy of the same fields at 0, records
 * from 32+n, PUTs without the generation, no generations file) is migrated by the open: its live records get
 * generations, their pages are stamped and synced, and the journal is rewritten in format 3 (said in
 * {@link dev.kvtier.RecoveryReport#repairs()}); what a format-2 journal had already lost cannot be detected.
 * Any other version (1 did not record prefix blocks) is a version mismatch: refused, or wiped when the
 * configuration says so.
 *
 * <h2>Generations file layout</h2>
 * <pre>
 * kvtier.generations: no header; the layout follows from the journal's page and extent sizes
 *   8 x (slot x pagesPerExtent + page)   i64  generation of the PUT whose bytes are in that page;
 *                                             0 (or past the end of the file): none
 * </pre>
 * Why it exists: a record's checksum proves its bytes were once put under its key, not that they are the
 * latest. Should the journal lose records (cut short, a damaged stretch skipped, a tail the disk never got),
 * an older PUT of a key that was later removed or rewritten would match its checksum again. The pages say
 * otherwise: a PUT stamps its pages with its generation before its record is appended, and a REMOVE is
 * followed by stamping its pages 0 before they can be reused. Recovery serves a record only when every one of
 * its pages still carries its generation; any other record is refused as {@code SUPERSEDED} (counted in
 * {@link dev.kvtier.RecoveryReport#rollbacksRefused()}, the log and the JFR recovery event). A missing
 * generations file confirms nothing: every record is refused. Stamps only ever refuse; a damaged stamp loses
 * a segment, never serves a wrong one.
 *
 * <h2>Write order (what makes a crash harmless)</h2>
 * <ol>
 *   <li>A segment arriving on DISK (a DISK put, or a demotion to DISK) has its bytes copied into its
 *       pages and checked against its CRC32C, then its pages stamped with its new generation,
 *       <em>before</em> its PUT is appended: a record never precedes its bytes or its stamps in the file
 *       order a killed process leaves behind (the page cache keeps all of them, in order).</li>
 *   <li>A segment leaving DISK (removed, promoted, dropped) has its REMOVE appended, then its pages
 *       stamped 0, <em>before</em> its pages are released for reuse.</li>
 *   <li>fsync points, per {@link dev.kvtier.DiskPersistence.FsyncPolicy}: {@code NONE}: none (a killed
 *       process loses nothing; a power loss may lose recent records, or keep a record whose bytes did
 *       not reach the disk). {@code PER_SEGMENT}: msync of the segment's pages, then the stamps and the PUT
 *       written and fdatasynced (generations file, then journal), before the put or demotion returns: the
 *       record is never durable without its bytes and stamps; a REMOVE and its stamps are fdatasynced the
 *       same way before the remove, promotion or drop returns. {@code PER_BATCH}: records are written at
 *       once; every {@code batchRecords} records (PUTs and REMOVEs), every {@code batchDelay} and at close,
 *       a background thread fsyncs each extent file the batch wrote to (once per file: the kernel writes
 *       back the pages the mapping dirtied), then fdatasyncs the generations file and the journal (a call
 *       waits only when four batches are unsynced). Compaction always syncs (generations file, then the
 *       compacted journal).</li>
 * </ol>
 *
 * <h2>What a restart may serve, per fsync policy</h2>
 * Never a version of a key older than the newest one acknowledged, and never a key whose removal was
 * acknowledged, where "acknowledged" means: {@code PER_SEGMENT}, the put, demotion, remove or promotion
 * returned; {@code PER_BATCH}, its batch was synced (at most {@code batchDelay} after it returned, or at a
 * clean close); {@code NONE}, against a killed process ({@code kill -9}) the call returned, against a power
 * loss nothing is acknowledged (any recent change may be undone, which then may bring back an older version
 * or a removed key whose record and stamps reached the disk while the later ones did not). This holds
 * against a damaged journal too (cut short, a stretch skipped as corrupt) as long as the generations file
 * holds what was written to it: the generations outvote the records that survived. Not detected: the whole
 * directory (journal, generations and extents) put back from an older copy is served as of that copy.
 * Whatever survives, no byte is served unchecked: every recovered segment's bytes are compared with
 * its recorded CRC32C before its first use (lazily) or during the open (eagerly), and a mismatch drops
 * the segment (counted in the {@link dev.kvtier.RecoveryReport}).
 *
 * <h2>Recovery (on open, with the directory's lock held)</h2>
 * <ol>
 *   <li>Delete a leftover {@code kvtier.journal.compacting}. No journal: start an empty one.</li>
 *   <li>Read the header from copy 1, or from copy 2 when copy 1 fails a check (too short, magic, namespace
 *       length, checksum); the copy that failed and its check are reported in
 *       {@link dev.kvtier.RecoveryReport#repairs()} and both copies are rewritten by the compaction below.
 *       Both copies failing (each check named), or another version, namespace, page size or extent size, is
 *       a mismatch: refuse, naming both values, or wipe (journal, generations file and persistent extents)
 *       when the configuration says so. Format 2 is migrated (above).</li>
 *   <li>Replay the records in file order into a map key &rarr; live PUT, keeping per extent page the key
 *       that owns it. A PUT whose pages are owned by another live segment takes them: the older one is
 *       discarded ({@code OVERLAPPED}: its REMOVE never reached the file). A PUT whose pages do not fit
 *       the extent geometry or its size is discarded ({@code CORRUPT_RECORD}).</li>
 *   <li>Damage: where no whole record with a valid magic, length and body CRC starts, scan forward byte
 *       by byte for the next one. If one is found, the bytes between are one {@code CORRUPT_RECORD};
 *       if none is, the rest of the file is one {@code TORN_RECORD} (the writer died while appending).</li>
 *   <li>Discard segments whose extent files are missing or of the wrong size ({@code EXTENT_MISSING}).</li>
 *   <li>Discard segments whose pages do not all carry their record's generation ({@code SUPERSEDED}: a
 *       rollback refused, see the generations file above). The next generation is set above every one
 *       seen in the journal and in the stamps read.</li>
 *   <li>If anything was discarded or repaired, or dead records outnumber {@code 2 x live + 4096}, compact: write the
 *       header and one PUT per live segment to {@code kvtier.journal.compacting}, fsync it, rename it over
 *       {@code kvtier.journal}, fsync the directory. Otherwise (a clean journal) nothing is rewritten.
 *       Appends continue at the end.</li>
 *   <li>Map the extents again (their bytes kept), claim each live segment's pages, and register it on
 *       DISK, unverified. No segment byte is read unless verification is eager. Prefix blocks are
 *       registered parents first (a chain reaches DISK tail first, so a child's PUT often precedes its
 *       parent's), linked to their parent and counted in its children, so recovered chains serve the
 *       prefix API as before the restart. A block whose parent's record is not live after the replay
 *       (never persisted because it was on GPU or CPU, discarded, a plain segment, or a cycle) is
 *       discarded with its descendants ({@code ORPHANED}, a REMOVE appended): it could never be reached
 *       as part of a chain.</li>
 * </ol>
 * A recovered block whose bytes fail their check is dropped with its cached descendants, children
 * first, whether the check is eager (its descendants are counted {@code ORPHANED}), on its first use,
 * or when a prefix restore reaches it (the restored prefix then ends before it): no block is ever left
 * pointing to a parent that is gone, and no parent leaves while a child stays.
 *
 * <h2>What a recovery costs</h2>
 * Time and heap grow linearly with the records: the open reads the whole journal into memory, replays it,
 * maps the generations file to check each live record's pages, and registers every live segment (no segment
 * byte is read unless verification is eager). Measured with {@code PersistenceBench recovery 1000000}
 * (10^6 persisted segments of 4 KiB with 14-character keys, 4 KiB pages, 64 MiB extents, lazy verification,
 * {@code -Xmx3g}; 2026-12-05 on a 2-core VM loaded by parallel builds, load average 21-29): the opening
 * thread used 3.7 s of CPU (median of 3 opens; 38-52 s of wall time at that load), the heap peaked at 1.2 GiB
 * during the open (garbage not yet collected included) and 0.7 GiB stayed reachable after it (about 700
 * bytes per segment: the cache's own entry for it and the journal's copy of its record). Give the JVM about
 * 1.3 KiB of heap per persisted segment for the open, or persist fewer, larger segments. A recovery that
 * lasts logs its progress at INFO every 2 s ({@link dev.kvtier.persist.RecoveryProgress}: phase, count so far,
 * time elapsed).
 *
 * <p>Bounded growth: the journal is compacted, at open or while running, whenever it holds more than
 * {@code 2 x live + 4096} records (and at an open that found damage); freed pages are reused before an extent is added, and extents
 * are reused by slot across restarts, so crash/reopen cycles do not grow the directory.
 */
package dev.kvtier.persist;
