import HTTPCore
import Testing

/// `Gzip` over the system's zlib: what the server sends inflates back, and
/// what is not a whole gzip member, or inflates past the bound, is refused.
@Suite struct GzipTests {
    private static let json = Array((0..<400).map { #"{"id":\#($0),"body":"message \#($0 * 7919 % 1000)"}"# }.joined(separator: ",").utf8)

    @Test(arguments: [Int32(1), 4, 6, 9])
    func roundTripsAtEveryLevel(level: Int32) throws {
        let compressed = try #require(Gzip.compress(Self.json, level: level))
        #expect(Array(compressed.prefix(3)) == [0x1f, 0x8b, 0x08])  // gzip magic, deflate
        #expect(compressed.count < Self.json.count / 3)
        #expect(Gzip.decompress(compressed) == Self.json)
    }

    @Test func emptyAndIncompressibleBodiesRoundTrip() throws {
        var random = SystemRandomNumberGenerator()
        let noise = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &random) }
        for body in [[], noise] {
            let compressed = try #require(Gzip.compress(body))
            #expect(Gzip.decompress(compressed) == body)
        }
    }

    @Test func refusesWhatIsNotAWholeMember() throws {
        let compressed = try #require(Gzip.compress(Self.json))
        #expect(Gzip.decompress(Array(compressed.dropLast(4))) == nil)  // no length trailer
        #expect(Gzip.decompress(Array(compressed.prefix(compressed.count / 2))) == nil)
        #expect(Gzip.decompress(Self.json) == nil)
        #expect(Gzip.decompress(compressed + [0x00]) == nil)  // trailing bytes
        #expect(Gzip.decompress(compressed, maximumBytes: Self.json.count - 1) == nil)
        #expect(Gzip.decompress(compressed, maximumBytes: Self.json.count) == Self.json)
    }
}
