import FuzzSupport
import HTTPCore

// Fuzzes `ChunkedBodyDecoder`, which frames both request and response bodies.
//
// Properties, beyond "no trap, no hang":
// - the input read as a chunked body gives the same body, the same end and
//   the same verdict fed whole, in pseudo-random pieces and byte by byte
//   (a decoder that resumed wrongly after a cut would let a split request
//   be framed differently from a whole one: request smuggling);
// - a decoded body never exceeds the limit;
// - the input taken as a body, chunked with sizes taken from the input and
//   an extension or trailer here and there, decodes to itself.

let maximumBodyBytes = 2048

func makeDecoder() -> ChunkedBodyDecoder {
    ChunkedBodyDecoder(maximumBodyBytes: maximumBodyBytes, maximumFramingBytes: 2048, maximumTrailerBytes: 1024)
}

struct Outcome: Equatable {
    var body: [UInt8] = []
    var isComplete = false
    /// Where the message ended in the input, once complete.
    var end: Int?
    var failed = false
}

/// Presents the decoder with what it has not consumed plus each new piece, as
/// `RequestParser` and `ResponseParser` do.
func decode(_ pieces: some Sequence<ArraySlice<UInt8>>) -> Outcome {
    var decoder = makeDecoder()
    var outcome = Outcome()
    var buffer: [UInt8] = []
    var start = 0
    for piece in pieces {
        buffer.append(contentsOf: piece)
        do {
            let end = buffer.count
            let from = start
            start = try buffer.withUnsafeBufferPointer { (bytes) throws(RequestParseError) -> Int in
                try decoder.decode(bytes, from: from, to: end, into: &outcome.body)
            }
        } catch {
            outcome.failed = true
            return outcome
        }
        fuzzCheck(outcome.body.count <= maximumBodyBytes, "decoded \(outcome.body.count) bytes past a limit of \(maximumBodyBytes)")
        if decoder.isComplete {
            outcome.isComplete = true
            outcome.end = start
            return outcome
        }
    }
    return outcome
}

/// `body` in chunked framing, cut where `SplitPoints` cuts it.
func chunked(_ body: [UInt8]) -> [UInt8] {
    var encoded: [UInt8] = []
    var index = 0
    for piece in SplitPoints(of: body, salt: 1) where !piece.isEmpty {
        let size = String(piece.count, radix: 16, uppercase: index % 2 == 0)
        let extensionText = index % 3 == 1 ? ";name=\"value\"" : ""
        encoded += Array("\(size)\(extensionText)\r\n".utf8) + piece + Array("\r\n".utf8)
        index += 1
    }
    encoded += Array((body.count % 2 == 0 ? "0\r\n\r\n" : "0\r\nX-Trailer: yes\r\n\r\n").utf8)
    return encoded
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = LibFuzzer.bytes(data, size)

    let whole = decode([bytes[...]])
    let split = decode(SplitPoints(of: bytes))
    let single = decode(SplitPoints.everyByte(of: bytes))
    for (name, other) in [("pieces", split), ("bytes", single)] {
        fuzzCheck(other == whole, "fed in \(name): \(other); fed whole: \(whole)")
    }

    if bytes.count <= maximumBodyBytes / 2 {
        let encoded = chunked(bytes)
        for pieces in [[encoded[...]], Array(SplitPoints(of: encoded))] {
            let roundTrip = decode(pieces)
            fuzzCheck(roundTrip.isComplete && roundTrip.body == bytes && roundTrip.end == encoded.count,
                      "a chunked body of \(bytes.count) bytes decoded to \(roundTrip)")
        }
    }
    return 0
}

LibFuzzer.run(testOneInput)
