/// Where to cut an input into pieces, as a network would: the same input
/// always gets the same cuts (so a crash replays), and different inputs get
/// different ones, which lets the fuzzer explore splits without a separate
/// control byte that would make the seed corpus unreadable.
public struct SplitPoints: Sequence {
    let bytes: [UInt8]
    let salt: UInt64

    /// - Parameter salt: selects another family of cuts for the same input.
    public init(of bytes: [UInt8], salt: UInt64 = 0) {
        self.bytes = bytes
        self.salt = salt
    }

    /// The pieces, in order; concatenated they are the input. Pieces are
    /// mostly short (1 to 16 bytes), sometimes empty, sometimes long.
    public func makeIterator() -> AnyIterator<ArraySlice<UInt8>> {
        var random = SplitMix64(seed: Self.fnv1a(bytes) ^ salt)
        var position = 0
        let bytes = self.bytes
        return AnyIterator {
            guard position < bytes.count else { return nil }
            let roll = random.next()
            let length: Int
            switch roll % 8 {
            case 0: length = 0
            case 1: length = Int(truncatingIfNeeded: (roll >> 8) % 512)
            default: length = 1 + Int(truncatingIfNeeded: (roll >> 8) % 16)
            }
            let end = Swift.min(bytes.count, position + length)
            defer { position = end }
            return bytes[position..<end]
        }
    }

    /// The input one byte at a time, as slices of it (no array per byte).
    public static func everyByte(of bytes: [UInt8]) -> LazyMapSequence<Range<Int>, ArraySlice<UInt8>> {
        bytes.indices.lazy.map { bytes[$0..<($0 + 1)] }
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }
}

/// A small, fast, well-mixed generator (Steele et al.); the fuzz targets
/// need reproducible choices, not unpredictable ones.
struct SplitMix64 {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
