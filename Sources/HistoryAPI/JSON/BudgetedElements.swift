/// The elements of one JSON array (a page's messages, a feed's events)
/// written into a `JSONBuffer` under a byte budget, measured as they are
/// written: nothing is encoded twice, and the buffer never holds much more
/// than the budget, whatever the elements asked for would take.
///
/// Two ways to stay under the budget, chosen per element:
/// - `appendDroppingFront`: the newest elements matter most (a page that
///   keeps the messages next to its `before` cursor). Each element is
///   written; then the oldest ones are dropped until the array fits again.
///   Dropped bytes are moved out only once they outweigh the kept ones, so
///   the total copying stays proportional to what was written.
/// - `appendUnlessFull`: the oldest elements matter most (`after` pages,
///   feeds). An element that does not fit is taken back and writing stops.
///
/// Every element after the first written carries its leading comma; the
/// first kept one loses it in `finish()`. At least one element is always
/// kept: one message larger than the budget is still answered.
struct BudgetedElements {
    /// Where the array's first element starts in the buffer.
    let arrayStart: Int
    /// The most bytes the document may take up to the end of its last element.
    private let limit: Int
    /// Buffer offsets of the elements written, each at its leading comma;
    /// moved down when dropped bytes are removed.
    private var starts: [Int] = []
    /// Elements dropped from the front.
    private(set) var droppedFront = 0
    /// True once an element was refused at the back.
    private(set) var stoppedAtBack = false

    /// - Parameter limit: the budget minus the most the document writes after its array.
    init(arrayStart: Int, limit: Int) {
        self.arrayStart = arrayStart
        self.limit = limit
    }

    /// Elements kept so far.
    var keptCount: Int { starts.count - droppedFront }

    /// Writes one element with `body`, which writes at most `atMost` bytes
    /// (its comma excluded), then drops the oldest kept elements, never the
    /// one just written, until the document fits again within `within` (a
    /// part of the budget: the older half of an `around` page) or the budget.
    mutating func appendDroppingFront(to buffer: inout JSONBuffer, atMost: Int, within: Int? = nil,
                                      _ body: (inout ByteCursor) -> Void) {
        write(to: &buffer, atMost: atMost, body)
        let bound = min(within ?? limit, limit)
        while droppedFront < starts.count - 1 && size(in: buffer) > bound { droppedFront += 1 }
        compactIfWorthIt(&buffer)
    }

    /// Writes one element unless the document would then pass the budget
    /// (always, when nothing is kept yet). Returns false, and stops every
    /// later append, when it was refused.
    @discardableResult
    mutating func appendUnlessFull(to buffer: inout JSONBuffer, atMost: Int, _ body: (inout ByteCursor) -> Void) -> Bool {
        guard !stoppedAtBack else { return false }
        let mark = buffer.byteCount
        write(to: &buffer, atMost: atMost, body)
        if keptCount > 1 && size(in: buffer) > limit {
            buffer.truncate(to: mark)
            starts.removeLast()
            stoppedAtBack = true
            return false
        }
        return true
    }

    /// Removes the dropped elements' bytes and the first kept one's comma.
    mutating func finish(_ buffer: inout JSONBuffer) {
        guard droppedFront > 0, droppedFront < starts.count else { return }
        buffer.remove(arrayStart..<(starts[droppedFront] + 1))
    }

    private mutating func write(to buffer: inout JSONBuffer, atMost: Int, _ body: (inout ByteCursor) -> Void) {
        let separated = !starts.isEmpty
        starts.append(buffer.byteCount)
        buffer.write(atMost: atMost + 1) { cursor in
            if separated { cursor.write(UInt8(ascii: ",")) }
            body(&cursor)
        }
    }

    /// The document's size up to its last element if it were finished now.
    private func size(in buffer: JSONBuffer) -> Int {
        guard droppedFront < starts.count else { return arrayStart }
        let first = starts[droppedFront]
        let comma = droppedFront > 0 ? 1 : 0
        return arrayStart + (buffer.byteCount - first) - comma
    }

    /// Moves the kept elements down over the dropped ones once those are
    /// the larger part, keeping the buffer under about twice the budget.
    private mutating func compactIfWorthIt(_ buffer: inout JSONBuffer) {
        guard droppedFront > 0, droppedFront < starts.count else { return }
        let dead = starts[droppedFront] - arrayStart
        let live = buffer.byteCount - starts[droppedFront]
        guard dead > live else { return }
        buffer.remove(arrayStart..<starts[droppedFront])
        for index in droppedFront..<starts.count { starts[index] -= dead }
    }
}
