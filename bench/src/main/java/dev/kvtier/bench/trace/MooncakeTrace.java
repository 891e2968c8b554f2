package dev.kvtier.bench.trace;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.IOException;
import java.io.Writer;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The public Mooncake trace format: JSON lines, one request a line,
 * <pre>
 * {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 2353]}
 * </pre>
 * {@code timestamp} is the arrival in milliseconds, the lengths are tokens, and each hash id names one
 * block of {@value #TOKENS_PER_BLOCK} input tokens (see {@link TraceRequest}). All four fields are required,
 * in any order; other fields are skipped; blank lines are skipped. Numbers must be whole ({@code 3.0} and
 * {@code 3e2} are whole too). Text is UTF-8.
 *
 * <p>The parser is a small hand-written one for this flat format (no JSON library is on the class path and
 * none is needed for four fields); it streams, holding one line at a time. Errors are
 * {@link TraceFormatException}s naming the line and the field. Stateless; the reader and writer are not
 * thread-safe and own the stream they are given (closing them closes it).
 */
public final class MooncakeTrace {
    /** Tokens per block in the Mooncake format. */
    public static final int TOKENS_PER_BLOCK = 512;

    private MooncakeTrace() {
    }

    /** Every request of the file, in file order. */
    public static List<TraceRequest> readAll(Path file) throws IOException {
        try (TraceReader reader = new TraceReader(Files.newBufferedReader(file, StandardCharsets.UTF_8), file.toString())) {
            List<TraceRequest> requests = new ArrayList<>();
            for (TraceRequest r = reader.next(); r != null; r = reader.next()) {
                requests.add(r);
            }
            return requests;
        }
    }

    /** Writes {@code requests} to {@code file} (replacing it), one line each. */
    public static void writeAll(Path file, Iterable<TraceRequest> requests) throws IOException {
        try (TraceWriter writer = new TraceWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            for (TraceRequest r : requests) {
                writer.write(r);
            }
        }
    }

    /** The line {@link TraceWriter} writes for {@code request}, without the line end. */
    public static String toLine(TraceRequest request) {
        StringBuilder sb = new StringBuilder(64 + 8 * request.blocks());
        sb.append("{\"timestamp\": ").append(request.timestampMs())
                .append(", \"input_length\": ").append(request.inputLength())
                .append(", \"output_length\": ").append(request.outputLength())
                .append(", \"hash_ids\": [");
        for (int i = 0; i < request.blocks(); i++) {
            sb.append(i == 0 ? "" : ", ").append(request.hashId(i));
        }
        return sb.append("]}").toString();
    }

    /**
     * Parses one line.
     *
     * @param source     the file or stream name, for the error message
     * @param lineNumber the line's number from 1, for the error message
     * @throws TraceFormatException naming the line and the field
     */
    public static TraceRequest parseLine(String line, String source, long lineNumber) throws TraceFormatException {
        return new LineParser(line, source, lineNumber).request();
    }

    /** Reads requests one line at a time. Not thread-safe; owns its reader. */
    public static final class TraceReader implements Closeable {
        private final BufferedReader in;
        private final String source;
        private long lineNumber;

        /**
         * @param in     the lines (closed by {@link #close()})
         * @param source its name for error messages, e.g. the file name
         */
        public TraceReader(BufferedReader in, String source) {
            this.in = in;
            this.source = source;
        }

        /**
         * The next request, or null at the end.
         *
         * @throws TraceFormatException naming the line and field of a bad line
         * @throws IOException          when the stream fails
         */
        public TraceRequest next() throws IOException {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                lineNumber++;
                if (!line.isBlank()) {
                    return parseLine(line, source, lineNumber);
                }
            }
            return null;
        }

        /** Lines read so far (blank ones included). */
        public long lineNumber() {
            return lineNumber;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /** Writes requests one line each ({@code \n} ends). Not thread-safe; owns its writer. */
    public static final class TraceWriter implements Closeable {
        private final Writer out;

        /** @param out where the lines go (closed by {@link #close()}) */
        public TraceWriter(Writer out) {
            this.out = out instanceof BufferedWriter ? out : new BufferedWriter(out);
        }

        /** Writes one request as one line. */
        public void write(TraceRequest request) throws IOException {
            out.write(toLine(request));
            out.write('\n');
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }

    /** A recursive-descent parser for one line: an object whose values are numbers, strings, literals or arrays. */
    private static final class LineParser {
        private static final int MAX_DEPTH = 32;
        private final String s;
        private final String source;
        private final long lineNumber;
        private int pos;

        LineParser(String line, String source, long lineNumber) {
            this.s = line;
            this.source = source;
            this.lineNumber = lineNumber;
        }

        TraceRequest request() throws TraceFormatException {
            Long timestamp = null;
            Long input = null;
            Long output = null;
            long[] ids = null;
            skipWhitespace();
            expect('{', null, "a JSON object");
            skipWhitespace();
            if (peek() != '}') {
                while (true) {
                    skipWhitespace();
                    int keyAt = pos;
                    String key = string(null);
                    skipWhitespace();
                    expect(':', key, "':' after the name");
                    skipWhitespace();
                    boolean duplicate = false;
                    switch (key) {
                        case "timestamp" -> {
                            duplicate = timestamp != null;
                            timestamp = wholeNumber(key, 0, Long.MAX_VALUE);
                        }
                        case "input_length" -> {
                            duplicate = input != null;
                            input = wholeNumber(key, 0, Integer.MAX_VALUE);
                        }
                        case "output_length" -> {
                            duplicate = output != null;
                            output = wholeNumber(key, 0, Integer.MAX_VALUE);
                        }
                        case "hash_ids" -> {
                            duplicate = ids != null;
                            ids = ids(key);
                        }
                        default -> skipValue(key, 0);
                    }
                    if (duplicate) {
                        throw error(key, "appears twice (column " + (keyAt + 1) + ")");
                    }
                    skipWhitespace();
                    if (peek() == ',') {
                        pos++;
                        continue;
                    }
                    expect('}', null, "',' or '}' after field \"" + key + "\"");
                    break;
                }
            } else {
                pos++;
            }
            skipWhitespace();
            if (pos < s.length()) {
                throw error(null, "unexpected '" + s.charAt(pos) + "' after the object at column " + (pos + 1)
                        + " (one request per line)");
            }
            if (timestamp == null) {
                throw error("timestamp", "missing (a request needs timestamp, input_length, output_length and hash_ids)");
            }
            if (input == null) {
                throw error("input_length", "missing (a request needs timestamp, input_length, output_length and hash_ids)");
            }
            if (output == null) {
                throw error("output_length", "missing (a request needs timestamp, input_length, output_length and hash_ids)");
            }
            if (ids == null) {
                throw error("hash_ids", "missing (a request needs timestamp, input_length, output_length and hash_ids)");
            }
            return new TraceRequest(timestamp, input.intValue(), output.intValue(), ids);
        }

        private long[] ids(String field) throws TraceFormatException {
            expect('[', field, "an array of block ids");
            long[] ids = new long[16];
            int n = 0;
            skipWhitespace();
            if (peek() == ']') {
                pos++;
                return new long[0];
            }
            while (true) {
                skipWhitespace();
                long id = wholeNumber(field + "[" + n + "]", 0, Long.MAX_VALUE);
                if (n == ids.length) {
                    ids = Arrays.copyOf(ids, 2 * n);
                }
                ids[n++] = id;
                skipWhitespace();
                if (peek() == ',') {
                    pos++;
                    continue;
                }
                expect(']', field, "',' or ']' in the array");
                return Arrays.copyOf(ids, n);
            }
        }

        private long wholeNumber(String field, long min, long max) throws TraceFormatException {
            int start = pos;
            if (peek() == '-') {
                pos++;
            }
            boolean fraction = false;
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c >= '0' && c <= '9') {
                    pos++;
                } else if (c == '.' || c == 'e' || c == 'E' || ((c == '+' || c == '-') && pos > start
                        && (s.charAt(pos - 1) == 'e' || s.charAt(pos - 1) == 'E'))) {
                    fraction = true;
                    pos++;
                } else {
                    break;
                }
            }
            String text = s.substring(start, pos);
            if (text.isEmpty() || text.equals("-")) {
                throw error(field, "expected a whole number at column " + (start + 1) + ", got " + describeAt(start));
            }
            try {
                long value;
                if (fraction) {
                    // 3.0 and 3e2 are whole; 2.5 is not. BigDecimal is exact where double is not.
                    value = new BigDecimal(text).longValueExact();
                } else {
                    value = Long.parseLong(text);
                }
                if (value < min || value > max) {
                    throw error(field, "expected a whole number from " + min + " to " + max + ", got " + text);
                }
                return value;
            } catch (NumberFormatException | ArithmeticException e) {
                throw error(field, "expected a whole number from " + min + " to " + max + ", got " + text);
            }
        }

        private String string(String field) throws TraceFormatException {
            expect('"', field, field == null ? "a field name in double quotes" : "a string");
            StringBuilder sb = new StringBuilder();
            while (pos < s.length()) {
                char c = s.charAt(pos++);
                if (c == '"') {
                    return sb.toString();
                }
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                if (pos >= s.length()) {
                    break;
                }
                char e = s.charAt(pos++);
                switch (e) {
                    case '"', '\\', '/' -> sb.append(e);
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (pos + 4 > s.length()) {
                            throw error(field, "a \\u escape needs 4 hex digits at column " + pos);
                        }
                        try {
                            sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error(field, "a \\u escape needs 4 hex digits at column " + pos);
                        }
                        pos += 4;
                    }
                    default -> throw error(field, "unknown escape '\\" + e + "' at column " + (pos - 1));
                }
            }
            throw error(field, "a string is not closed (no '\"' before the end of the line)");
        }

        /** Skips any JSON value of a field we do not read. */
        private void skipValue(String field, int depth) throws TraceFormatException {
            if (depth > MAX_DEPTH) {
                throw error(field, "nested deeper than " + MAX_DEPTH + " levels");
            }
            char c = peek();
            switch (c) {
                case '"' -> string(field);
                case '[', '{' -> {
                    char close = c == '[' ? ']' : '}';
                    pos++;
                    skipWhitespace();
                    if (peek() == close) {
                        pos++;
                        return;
                    }
                    while (true) {
                        skipWhitespace();
                        if (c == '{') {
                            string(field);
                            skipWhitespace();
                            expect(':', field, "':' after the name");
                            skipWhitespace();
                        }
                        skipValue(field, depth + 1);
                        skipWhitespace();
                        if (peek() == ',') {
                            pos++;
                            continue;
                        }
                        expect(close, field, "',' or '" + close + "'");
                        return;
                    }
                }
                case 't' -> literal(field, "true");
                case 'f' -> literal(field, "false");
                case 'n' -> literal(field, "null");
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        while (pos < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos)) >= 0) {
                            pos++;
                        }
                    } else {
                        throw error(field, "expected a JSON value at column " + (pos + 1) + ", got " + describeAt(pos));
                    }
                }
            }
        }

        private void literal(String field, String word) throws TraceFormatException {
            if (!s.startsWith(word, pos)) {
                throw error(field, "expected a JSON value at column " + (pos + 1) + ", got " + describeAt(pos));
            }
            pos += word.length();
        }

        private void expect(char c, String field, String what) throws TraceFormatException {
            if (peek() != c) {
                throw error(field, "expected " + what + " at column " + (pos + 1) + ", got " + describeAt(pos));
            }
            pos++;
        }

        private char peek() {
            return pos < s.length() ? s.charAt(pos) : '\0';
        }

        private void skipWhitespace() {
            while (pos < s.length() && (s.charAt(pos) == ' ' || s.charAt(pos) == '\t' || s.charAt(pos) == '\r'
                    || s.charAt(pos) == '\n' || s.charAt(pos) == '\uFEFF')) {
                pos++;
            }
        }

        private String describeAt(int at) {
            if (at >= s.length()) {
                return "the end of the line";
            }
            int end = Math.min(s.length(), at + 12);
            return "'" + s.substring(at, end) + (end < s.length() ? "..." : "") + "'";
        }

        private TraceFormatException error(String field, String problem) {
            return new TraceFormatException(source, lineNumber, field, problem);
        }
    }
}
