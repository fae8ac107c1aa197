import Testing
import HTTPCore
@testable import HistoryStore
@testable import HistoryAPI
@testable import HistoryAccess

/// The page path's fast paths (docs/performance.md, "Instructions per deep
/// page") against the plain code they replace: each must give the same
/// bytes for every input, the unusual ones above all.
@Suite("Page path fast paths")
struct PagePathFastPathTests {
    // MARK: - JSON strings

    /// The escaping the contract asks for, one byte at a time.
    static func referenceJSONString(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    static func written(_ bytes: [UInt8]) -> [UInt8] {
        var buffer = JSONBuffer(capacity: 8)
        buffer.write(atMost: ByteCursor.stringBound(bytes.count)) { cursor in
            bytes.withUnsafeBufferPointer { cursor.writeString($0) }
        }
        return buffer.finish()
    }

    /// Every byte that needs an escape, and bytes that do not (ASCII next
    /// to them, UTF-8 of two, three and four bytes, 0x7F, 0x80...0xFF
    /// inside sequences), at every offset of strings long enough to cross
    /// the 16- and 8-byte chunks.
    @Test func everyByteAtEveryOffsetIsEscapedAsByTheByteLoop() {
        var specials: [UInt8] = Array(0..<0x20) + [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x7F, UInt8(ascii: "/")]
        specials += Array("é€😀".utf8)
        let filler = Array("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ".utf8)
        for length in 0...40 {
            let plain = Array(filler.prefix(length))
            #expect(Self.written(plain) == Self.referenceJSONString(plain))
            for offset in 0..<max(length, 1) {
                for special in specials {
                    var bytes = plain.isEmpty ? [UInt8(ascii: "x")] : plain
                    bytes[min(offset, bytes.count - 1)] = special
                    #expect(Self.written(bytes) == Self.referenceJSONString(bytes), "length \(length) offset \(offset) byte \(special)")
                }
            }
        }
    }

    @Test func stringsOfOnlyEscapesAndOfLongUnicodeMatchTheByteLoop() {
        let cases: [String] = [
            String(repeating: "\"", count: 33),
            String(repeating: "\\", count: 17),
            String(repeating: "\u{1}", count: 31),
            String(repeating: "ü日本語😀", count: 9),
            "tab\there\nnew line\r\u{0}end" + String(repeating: "x", count: 20) + "\u{1F}",
        ]
        for text in cases {
            #expect(Self.written(Array(text.utf8)) == Self.referenceJSONString(Array(text.utf8)))
        }
    }

    // MARK: - Integers

    @Test func integersAreWrittenAsTheirDecimalDescription() {
        var values: [Int64] = [0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 1001, .max, .min, .min + 1, -1, -9, -10, -100]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power, -(power - 1)]
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 { values.append(Int64.random(in: .min ... .max, using: &generator)) }
        for _ in 0..<2000 { values.append(Int64.random(in: 0...1_000_000, using: &generator)) }
        for value in values {
            var buffer = JSONBuffer(capacity: 8)
            buffer.write(atMost: ByteCursor.integerBound) { cursor in cursor.writeInteger(value) }
            #expect(String(decoding: buffer.finish(), as: UTF8.self) == String(value))
        }
    }

    // MARK: - The buffer

    /// Room past the first capacity: the bytes written before the growth
    /// stay, and `finish` gives exactly the bytes written.
    @Test func aBufferThatGrowsKeepsItsBytesAndFinishesWithExactlyThem() {
        var buffer = JSONBuffer(capacity: 64)
        var expected = ""
        for index in 0..<500 {
            buffer.write(atMost: 64) { cursor in
                cursor.writeInteger(Int64(index))
                cursor.write(UInt8(ascii: ","))
            }
            expected += "\(index),"
        }
        buffer.truncate(to: buffer.byteCount - 1)
        expected.removeLast()
        let bytes = buffer.finish()
        #expect(bytes.count == expected.utf8.count)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    // MARK: - Host names

    @Test(arguments: [
        "localhost", "LOCALHOST:8080", "127.0.0.1", "127.0.0.1:80", "[::1]", "[::1]:443", "[::1", "[::1]x",
        "localhost:", "localhost:123456", "localhost:12a", ":80", "", "Example.COM", "a:b:c", "[]", "[]:1",
        "ex\u{212A}ample", "ÉCOLE.fr", "host:٣",
    ])
    func anASCIIHostNameIsReadAsTheGeneralPathReadsIt(host: String) {
        let general = BrowserSafety.hostName(of: host.lowercased())
        if let fast = BrowserSafety.asciiHostName(of: host) {
            #expect(fast == general)
        } else {
            // The fast path declines only what is non-ASCII or malformed.
            #expect(!host.utf8.allSatisfy { $0 < 0x80 } || general == nil)
        }
    }

    // MARK: - Header names

    @Test func headerNamesCompareAsASCIIWithoutCase() {
        let names = ["Host", "host", "HOST", "Hosu", "Accept-Encoding", "accept-encoding", "accept_encoding",
                     "If-None-Match", "if-none-matcH", "@", "`", "[", "{", "Hos", "Hostt", "", "é", "É"]
        for a in names {
            for b in names {
                let reference = a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { x, y in
                    x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7a)
                }
                #expect(a.caseInsensitiveEquals(b) == reference, "\(a) vs \(b)")
            }
        }
        let headers: HTTPHeaders = ["Host": "a", "accept-encoding": "gzip"]
        #expect(headers["ACCEPT-ENCODING"] == "gzip")
        #expect(headers["If-None-Match"] == nil)
    }

    // MARK: - Entity tags

    /// The tag a page had before the hashing and the formatting were done
    /// on bytes: the generic hash of the same fields, interpolated.
    @Test func aPageTagIsTheSameBytesAsBefore() {
        let conversation = ConversationID("room-7")!
        for (cursor, gzip) in [(PageCursor.before(1234), false), (.newest, true), (.between(after: 3, before: 99), false)] {
            let query = PageQuery(cursor: cursor, limit: 50, window: nil)
            var hasher = FNV1a64()
            func combine(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { hasher.combine($0) } }
            combine(1)
            hasher.combine("room-7".utf8)
            switch cursor {
            case .newest: combine(0)
            case .before(let id): combine(1); combine(id)
            case .between(let after, let before): combine(3); combine(after); combine(before)
            default: Issue.record("not in this test")
            }
            combine(50)
            combine(-1)
            combine(1_048_576)
            let old = "\"m\(98_765)-\(FNV1a64.hex(hasher.value))\(gzip ? "-gz" : "")\""
            let tag = EntityTag.page(of: conversation, version: 98_765, query: query, budget: 1_048_576, gzip: gzip)
            #expect(tag.value == old)
        }
    }

    // MARK: - Timestamps

    /// A page's dates through `RFC3339Dates` against `writeRFC3339` one by
    /// one: across midnight, the end of February in leap and common years
    /// (2000, 1900, 2024, 2100), new year, before 1970, and the clamped
    /// years outside 0...9999; in order, backwards and alternating days.
    @Test func theDayCacheWritesWhatEachTimestampWritesAlone() {
        let day: Int64 = 86_400_000
        func ms(_ year: Int64, _ month: Int64, _ dayOfMonth: Int64) -> Int64 {
            Timestamp.daysSinceEpoch(year: year, month: month, day: dayOfMonth) * day
        }
        var times: [Int64] = [0, -1, 1, day - 1, day, -day, -day - 1, .max / 2, .min / 2]
        for (year, month, dayOfMonth) in [(2000, 2, 28), (2000, 2, 29), (2000, 3, 1), (1900, 2, 28), (1900, 3, 1),
                                          (2024, 2, 29), (2100, 2, 28), (2026, 12, 31), (2027, 1, 1), (1969, 12, 31),
                                          (1, 1, 1), (9999, 12, 31), (10000, 1, 1), (-1, 12, 31)] as [(Int64, Int64, Int64)] {
            let start = ms(year, month, dayOfMonth)
            times += [start - 1, start, start + 1, start + 43_200_123, start + day - 1]
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 { times.append(Int64.random(in: -100_000 * day ... 100_000 * day, using: &generator)) }
        for sequence in [times, times.sorted(), times.sorted().reversed(), zip(times, times.reversed()).flatMap { [$0, $1] }] {
            var dates = RFC3339Dates()
            for milliseconds in sequence {
                let time = Timestamp(millisecondsSinceEpoch: milliseconds)
                var cached = [UInt8](repeating: 0, count: Timestamp.rfc3339Length)
                cached.withUnsafeMutableBufferPointer { dates.write(time, to: $0.baseAddress!) }
                var alone = [UInt8](repeating: 0, count: Timestamp.rfc3339Length)
                alone.withUnsafeMutableBufferPointer { time.writeRFC3339(to: $0.baseAddress!) }
                #expect(cached == alone, "\(milliseconds)")
            }
        }
    }

    // MARK: - Credentials

    @Test func spacesAndTabsAreTrimmedAsTheCharacterWalkTrimsThem() {
        func reference(_ text: Substring) -> Substring {
            var result = text
            while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
            while let last = result.last, last == " " || last == "\t" { result.removeLast() }
            return result
        }
        let cases = ["", " ", "\t\t", "Bearer abc", "  Bearer abc \t", " \u{301}Bearer x", "x \u{301}", "x\u{600} ",
                     "\u{600} x", "\t \u{308}", "é ", " é", "a b", "\r\n x", "😀 ", " 😀"]
        for text in cases {
            let value = Substring(text)
            #expect(value.trimmingSpacesAndTabs() == reference(value), "\(text.unicodeScalars.map(\.value))")
            let inner = Substring("zz" + text + "zz").dropFirst(2).dropLast(2)
            #expect(inner.trimmingSpacesAndTabs() == reference(inner))
        }
    }
}
