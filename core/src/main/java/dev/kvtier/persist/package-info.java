/**
 * Persistence of the DISK tier (opt-in: {@code KvTierConfig.builder().persistence(DiskPersistence.of(ns))}):
 * the on-disk design, the journal that records it, and its recovery. Only DISK is persistent; the GPU
 * and CPU tiers are volatile, and a segment lives in exactly one tier, so a segment promoted off DISK
 * (or put on GPU/CPU) is gone after a close or crash, and one demoted to DISK is persisted from then on.
 *
 * <h2>Files in the disk directory</h2>
 * <pre>
 * kvtier.lock                    one-owner lock (DiskDirectoryLock); never read as data
 * kvtier.journal                 header, then records: which segment's bytes lie in which pages
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
 * header
 *   0   u64  magic "KVTJRNL\0"
 *   8   i32  format version (2; a journal of version 1, which did not record prefix blocks, is a
 *            version mismatch: refused, or wiped when the configuration says so)
 *   12  i32  page size in bytes
 *   16  i64  extent size in bytes
 *   24  i32  n: namespace length in UTF-8 bytes
 *   28  n    namespace, UTF-8
 *   28+n i32 CRC32C of bytes [0, 28+n)
 * record (repeated to the end of the file)
 *   0   i32  magic "KVTR" (0x5254564B)
 *   4   i32  L: body length (5 .. 2^20)
 *   8   i32  CRC32C of the body
 *   12  body
 *       0    i8   type: 1 PUT, 2 REMOVE
 *       1    i32  k: key length in UTF-16 code units (lossless for every Java string)
 *       5    2k   key, UTF-16LE
 *       PUT only, from 5+2k:
 *       +0   i64  first position      +8   i64  end position (exclusive)
 *       +16  i64  size in bytes       +24  i64  access count when it arrived on DISK
 *       +32  i32  CRC32C of the segment's bytes as they were put
 *       +36  i32  r: runs             +40  r x (i32 extent slot, i32 first page, i32 page count)
 *       then, from 5+2k+40+12r:
 *       +0   i8   kind: 0 plain segment, 1 prefix block
 *       +1   i32  p: parent key length in UTF-16 code units; -1 for a plain segment and for the first
 *                 block of a chain (a plain segment must say -1)
 *       +5   2p   parent key, UTF-16LE (a block's body ends here: L = 5+2k+40+12r+5+2max(p,0))
 * </pre>
 * A PUT says "segment K's bytes are in these pages and have this checksum"; a later PUT of K replaces
 * it; a REMOVE ends it. Usage counts are kept as they were when the segment arrived on DISK (touches
 * while it stays there are not recorded): a recovered segment comes back with them, so a frequency
 * policy ranks it as before the restart.
 *
 * <h2>Write order (what makes a crash harmless)</h2>
 * <ol>
 *   <li>A segment arriving on DISK (a DISK put, or a demotion to DISK) has its bytes copied into its
 *       pages and checked against its CRC32C <em>before</em> its PUT is appended: a record never
 *       precedes its bytes in the file order a killed process leaves behind (the page cache keeps
 *       both, in order).</li>
 *   <li>A segment leaving DISK (removed, promoted, dropped) has its REMOVE appended <em>before</em> its
 *       pages are released for reuse.</li>
 *   <li>fsync points, per {@link dev.kvtier.DiskPersistence.FsyncPolicy}: {@code NONE}: none (a killed
 *       process loses nothing; a power loss may lose recent records, or keep a record whose bytes did
 *       not reach the disk). {@code PER_SEGMENT}: msync of the segment's pages, then write and fdatasync
 *       of its PUT, before the put or demotion returns: the record is never durable without its bytes.
 *       {@code PER_BATCH}: records are written at once; every {@code batchRecords} records, every
 *       {@code batchDelay} and at close, a background thread fsyncs each extent file the batch wrote
 *       to (once per file: the kernel writes back the pages the mapping dirtied), then fdatasyncs the
 *       journal (a put waits only when four batches are unsynced). REMOVEs are never synced on their own (a lost REMOVE is handled by
 *       recovery, below). Compaction always syncs.</li>
 * </ol>
 * Whatever survives, no byte is served unchecked: every recovered segment's bytes are compared with
 * its recorded CRC32C before its first use (lazily) or during the open (eagerly), and a mismatch drops
 * the segment (counted in the {@link dev.kvtier.RecoveryReport}).
 *
 * <h2>Recovery (on open, with the directory's lock held)</h2>
 * <ol>
 *   <li>Delete a leftover {@code kvtier.journal.compacting}. No journal: start an empty one.</li>
 *   <li>Read the header; an unreadable header (bad magic or CRC) or another version, namespace, page
 *       size or extent size is a mismatch: refuse, naming both values, or wipe (journal and persistent
 *       extents) when the configuration says so.</li>
 *   <li>Replay the records in file order into a map key &rarr; live PUT, keeping per extent page the key
 *       that owns it. A PUT whose pages are owned by another live segment takes them: the older one is
 *       discarded ({@code OVERLAPPED}: its REMOVE never reached the file). A PUT whose pages do not fit
 *       the extent geometry or its size is discarded ({@code CORRUPT_RECORD}).</li>
 *   <li>Damage: where no whole record with a valid magic, length and body CRC starts, scan forward byte
 *       by byte for the next one. If one is found, the bytes between are one {@code CORRUPT_RECORD};
 *       if none is, the rest of the file is one {@code TORN_RECORD} (the writer died while appending).</li>
 *   <li>Discard segments whose extent files are missing or of the wrong size ({@code EXTENT_MISSING}).</li>
 *   <li>If anything was discarded, or dead records outnumber {@code 2 x live + 4096}, compact: write the
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
 * Bounded growth: the journal is compacted, at open or while running, whenever it holds more than
 * {@code 2 x live + 4096} records (and at an open that found damage); freed pages are reused before an extent is added, and extents
 * are reused by slot across restarts, so crash/reopen cycles do not grow the directory.
 */
package dev.kvtier.persist;
