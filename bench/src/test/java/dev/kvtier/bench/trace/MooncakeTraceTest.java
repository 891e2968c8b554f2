package dev.kvtier.bench.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MooncakeTraceTest {
    @TempDir
    Path temp;

    @Test
    void aLineInThePublishedFormat() throws Exception {
        String line = "{\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 2353]}";
        TraceRequest r = MooncakeTrace.parseLine(line, "t", 1);
        assertEquals(new TraceRequest(27482, 6955, 52, new long[] {46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 2353}), r);
        assertEquals(line, MooncakeTrace.toLine(r), "written exactly as Python's json.dumps writes it");
    }

    @Test
    void fieldsInAnyOrderUnknownFieldsSkippedWholeNumbersInAnyForm() throws Exception {
        TraceRequest r = MooncakeTrace.parseLine(
                " {\"hash_ids\":[],\"note\":\"a \\\"quoted\\\" \\u00e9 , } ]\",\"extra\":{\"a\":[1,{\"b\":null}],\"c\":true},"
                        + "\"output_length\":3.0,\"input_length\":0,\"timestamp\":1e3,\"f\":-2.5e-3} ", "t", 1);
        assertEquals(new TraceRequest(1000, 0, 3, new long[0]), r);
    }

    @Test
    void writeThenReadStreamsBackTheSameRequestsSkippingBlankLines() throws Exception {
        List<TraceRequest> requests = TraceGenerator.generate(TraceGenerator.Kind.CHAT, 50, 3);
        Path file = temp.resolve("t.jsonl");
        MooncakeTrace.writeAll(file, requests);
        assertEquals(requests, MooncakeTrace.readAll(file));
        Files.writeString(file, "\n" + Files.readString(file) + "\n   \n");
        assertEquals(requests, MooncakeTrace.readAll(file));
        try (MooncakeTrace.TraceReader reader = new MooncakeTrace.TraceReader(new BufferedReader(new StringReader("")), "empty")) {
            assertNull(reader.next());
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "`[1, 2]`                                                                         | - | expected a JSON object at column 1",
            "`{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3}`                  | hash_ids | missing",
            "`{\"timestamp\": 1, \"input_length\": 2, \"hash_ids\": []}`                      | output_length | missing",
            "`{\"timestamp\": -1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": []}` | timestamp | from 0 to",
            "`{\"timestamp\": 1, \"input_length\": 2.5, \"output_length\": 3, \"hash_ids\": []}` | input_length | got 2.5",
            "`{\"timestamp\": 1, \"input_length\": \"2\", \"output_length\": 3, \"hash_ids\": []}` | input_length | expected a whole number at column 34, got '\"2\"",
            "`{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": [4, x]}` | hash_ids[1] | got 'x]}'",
            "`{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": [4, -5]}` | hash_ids[1] | got -5",
            "`{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": 4}`    | hash_ids | expected an array of block ids",
            "`{\"timestamp\": 1, \"timestamp\": 2, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": []}` | timestamp | appears twice",
            "`{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": []} {}` | - | one request per line",
            "`{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": [1]`  | - | ',' or '}' after field \"hash_ids\" at column 72, got the end of the line",
            "`{\"timestamp\": 99999999999999999999, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": []}` | timestamp | got 99999999999999999999",
    })
    void badLinesNameTheLineAndTheField(String line, String field, String expected) throws Exception {
        Path file = temp.resolve("bad.jsonl");
        Files.writeString(file, MooncakeTrace.toLine(new TraceRequest(0, 512, 1, new long[] {0})) + "\n\n" + line + "\n");
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> MooncakeTrace.readAll(file));
        assertEquals(3, e.lineNumber());
        assertTrue(e.getMessage().startsWith(file + ":3: "), e.getMessage());
        if (field.equals("-")) {
            assertNull(e.field(), e.getMessage());
        } else {
            assertEquals(field, e.field(), e.getMessage());
            assertTrue(e.getMessage().contains("field \"" + field + "\""), e.getMessage());
        }
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
