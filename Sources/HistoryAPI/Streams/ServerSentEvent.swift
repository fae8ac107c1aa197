/// One event of a stream (docs/API.md, "Live"): `id:` (the cursor a
/// client resumes after with `Last-Event-ID`), `event:` (its type) and
/// `data:` (one JSON object, on one line), then a blank line.
struct ServerSentEvent: Sendable, Hashable {
    /// The feed's cursor at this event (a version, an activity); nil for an
    /// event that moves no cursor (`typing`): a client's `Last-Event-ID`
    /// then stays at the last event that had one.
    var id: Int64?
    var type: String
    /// Compact JSON: our writer escapes every line break inside strings, so
    /// the object fits one `data:` line.
    var data: [UInt8]

    init(id: Int64?, type: String, data: [UInt8]) {
        self.id = id
        self.type = type
        self.data = data
    }

    /// The event's bytes on the wire.
    func append(to output: inout [UInt8]) {
        output.reserveCapacity(output.count + data.count + type.utf8.count + 40)
        if let id {
            output.append(contentsOf: Self.idField)
            output.append(contentsOf: String(id).utf8)
            output.append(Self.lineFeed)
        }
        output.append(contentsOf: Self.eventField)
        // Types are ours, but a line break in one would end the field.
        for byte in type.utf8 where byte != Self.lineFeed && byte != Self.carriageReturn { output.append(byte) }
        output.append(Self.lineFeed)
        output.append(contentsOf: Self.dataField)
        for byte in data where byte != Self.lineFeed && byte != Self.carriageReturn { output.append(byte) }
        output.append(Self.lineFeed)
        output.append(Self.lineFeed)
    }

    /// A comment line: keeps proxies and clients from taking a quiet
    /// stream for a dead one; clients ignore it.
    static let heartbeat = Array(":\n\n".utf8)

    private static let idField = Array("id: ".utf8)
    private static let eventField = Array("event: ".utf8)
    private static let dataField = Array("data: ".utf8)
    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
}
