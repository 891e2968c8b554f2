package dev.kvtier.bench.trace;

import java.io.IOException;

/**
 * A trace line that is not a valid Mooncake request. The message names the source, the line number (from
 * 1), the field when one is at fault, and what was expected.
 */
public final class TraceFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    private final long lineNumber;
    private final String field;

    /**
     * @param source     the file or stream name
     * @param lineNumber the line, from 1
     * @param field      the field at fault, or null when the line as a whole is
     * @param problem    what is wrong and what was expected
     */
    public TraceFormatException(String source, long lineNumber, String field, String problem) {
        super(source + ":" + lineNumber + ": " + (field == null ? "" : "field \"" + field + "\": ") + problem);
        this.lineNumber = lineNumber;
        this.field = field;
    }

    /** The line at fault, from 1. */
    public long lineNumber() {
        return lineNumber;
    }

    /** The field at fault, or null when the line as a whole is. */
    public String field() {
        return field;
    }
}
