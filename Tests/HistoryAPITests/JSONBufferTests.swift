import Testing
@testable import HistoryAPI

@Suite("JSONBuffer bounds")
struct JSONBufferTests {
    @Test func aPieceThatFillsItsBoundExactlyIsWritten() {
        var buffer = JSONBuffer(capacity: 64)
        buffer.write(atMost: 4) { cursor in cursor.write("true") }
        buffer.write(atMost: ByteCursor.integerBound) { cursor in cursor.writeInteger(.min) }
        buffer.write(atMost: ByteCursor.stringBound(1)) { cursor in cursor.writeString("\u{1}") }
        #expect(String(decoding: buffer.finish(), as: UTF8.self) == #"true-9223372036854775808"\u0001""#)
    }

    /// A string needs room for what it writes, not for the worst case of its
    /// length: an identifier in `2 + count`, an escaped string in exactly
    /// its escaped length.
    @Test func aStringNeedsRoomForItsBytesNotForTheWorstCase() {
        let id = String(repeating: "u", count: 64)
        var buffer = JSONBuffer(capacity: 64)
        buffer.write(atMost: 66) { cursor in cursor.writeString(id) }
        let text = "a\u{1}b\"c\n"
        let escaped = #""a\u0001b\"c\n""#
        buffer.write(atMost: escaped.utf8.count) { cursor in cursor.writeString(text) }
        #expect(String(decoding: buffer.finish(), as: UTF8.self) == "\"\(id)\"" + escaped)
    }

    /// The cursor checks before it stores: the bytes past the room stay as
    /// they were, because the process stops first.
    @Test func aWriteLargerThanItsRoomStopsBeforeStoringAByte() async {
        await #expect(processExitsWith: .failure) {
            // Eight guard bytes after four bytes of room.
            let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: 12)
            memory.initialize(repeating: 0xAA, count: 12)
            var cursor = ByteCursor(memory, room: 4)
            cursor.write("false")
        }
        await #expect(processExitsWith: .failure) {
            let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
            var cursor = ByteCursor(memory, room: 8)
            cursor.writeString("a string longer than its room")
        }
        await #expect(processExitsWith: .failure) {
            // Plain bytes fit; the escape does not.
            let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
            var cursor = ByteCursor(memory, room: 6)
            cursor.writeString("ab\u{1}")
        }
        await #expect(processExitsWith: .failure) {
            var buffer = JSONBuffer(capacity: 64)
            buffer.write(atMost: 2) { cursor in cursor.writeInteger(12345) }
        }
    }

    @Test func aWriteThatFitsStoresNothingPastItsRoom() {
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: 12)
        defer { memory.deallocate() }
        memory.initialize(repeating: 0xAA, count: 12)
        var cursor = ByteCursor(memory, room: 4)
        cursor.write("null")
        #expect(cursor.position == memory + 4)
        #expect(UnsafeBufferPointer(start: memory + 4, count: 8).allSatisfy { $0 == 0xAA })
    }
}
