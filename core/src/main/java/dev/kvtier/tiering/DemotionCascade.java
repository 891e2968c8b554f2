package dev.kvtier.tiering;

import dev.kvtier.store.Tier;

import java.util.List;

/**
 * Where a segment demoted off a tier to make room may go, in order of preference: the
 * {@link RoomMaker} tries each target in turn (making room on a bounded target first when the
 * segment would fit there). A strategy rather than code in the room maker, so a deployment (or a
 * test) can choose, for example, to spill GPU victims straight to DISK.
 */
@FunctionalInterface
interface DemotionCascade {
    /** GPU to CPU, then DISK when CPU can take it no more; CPU to DISK; nothing below DISK. */
    DemotionCascade STANDARD = from -> switch (from) {
        case GPU -> List.of(Tier.CPU, Tier.DISK);
        case CPU -> List.of(Tier.DISK);
        case DISK -> List.of();
    };

    /** The slower tiers a victim on {@code from} may go to, most preferred first. */
    List<Tier> targets(Tier from);
}
