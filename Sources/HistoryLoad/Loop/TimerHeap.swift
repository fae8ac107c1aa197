/// An event loop's pending timers (open-loop slots, retry pauses), the
/// earliest first; equal times keep their order.
struct TimerHeap {
    private struct Item {
        var due: UInt64
        var order: UInt64
        var action: () -> Void
    }

    private var items: [Item] = []
    private var counter: UInt64 = 0

    var nextDue: UInt64? { items.first?.due }

    mutating func schedule(at due: UInt64, _ action: @escaping () -> Void) {
        counter += 1
        items.append(Item(due: due, order: counter, action: action))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest timer due at or before `now`, removed.
    mutating func popDue(now: UInt64) -> (() -> Void)? {
        guard let first = items.first, first.due <= now else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < items.count, Self.before(items[left], items[smallest]) { smallest = left }
                if right < items.count, Self.before(items[right], items[smallest]) { smallest = right }
                if smallest == parent { break }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.action
    }

    mutating func removeAll() { items.removeAll() }

    private static func before(_ a: Item, _ b: Item) -> Bool {
        a.due != b.due ? a.due < b.due : a.order < b.order
    }
}
