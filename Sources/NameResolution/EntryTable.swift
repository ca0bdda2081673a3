// The resolver cache's storage: an open-addressing hash table keyed by the name's FNV hash,
// about twice as fast to probe as a Dictionary, which must run SipHash on every lookup.
import Foundation

/// Cache entries by key: linear probing, at most half full, deletion by backward shift (no
/// tombstones, so a long-lived cache never degrades).
struct EntryTable {
    struct Slot {
        var key: CacheKey
        var entry: CacheEntrySnapshot
    }

    private var slots: [Slot?]
    private var mask: Int
    private(set) var count = 0

    init(minimumCapacity: Int = 8) {
        var size = 16
        while size < minimumCapacity * 2 { size <<= 1 }
        slots = Array(repeating: nil, count: size)
        mask = size - 1
    }

    @inline(__always)
    private func home(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash) & mask }

    /// The slot holding `key`, or nil.
    @inline(__always)
    func slot(of key: CacheKey) -> Int? {
        var i = home(key.hash)
        while slots[i] != nil {
            if slots[i]!.key == key { return i }
            i = (i + 1) & mask
        }
        return nil
    }

    /// The entry in a slot `slot(of:)` returned; modified in place.
    subscript(slot index: Int) -> CacheEntrySnapshot {
        @inline(__always) get { slots[index]!.entry }
        @inline(__always) _modify { yield &slots[index]!.entry }
    }

    /// The entry for `key`; assigning nil removes it.
    subscript(key: CacheKey) -> CacheEntrySnapshot? {
        get { slot(of: key).map { slots[$0]!.entry } }
        set {
            if let newValue { insert(key, newValue) } else if let index = slot(of: key) { remove(at: index) }
        }
    }

    private mutating func insert(_ key: CacheKey, _ entry: CacheEntrySnapshot) {
        if let index = slot(of: key) {
            slots[index]!.entry = entry
            return
        }
        if (count + 1) * 2 > slots.count { grow() }
        var i = home(key.hash)
        while slots[i] != nil { i = (i + 1) & mask }
        slots[i] = Slot(key: key, entry: entry)
        count += 1
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: nil, count: old.count * 2)
        mask = slots.count - 1
        count = 0
        for case let slot? in old { insert(slot.key, slot.entry) }
    }

    /// Empties a slot and shifts later members of its probe run back, so every key stays
    /// reachable from its home slot without tombstones.
    private mutating func remove(at index: Int) {
        slots[index] = nil
        count -= 1
        var hole = index
        var j = (index + 1) & mask
        while slots[j] != nil {
            let h = home(slots[j]!.key.hash)
            // The member at j may fill the hole when the hole lies on its path from home to j.
            if (j &- h) & mask >= (j &- hole) & mask {
                slots[hole] = slots[j]
                slots[j] = nil
                hole = j
            }
            j = (j + 1) & mask
        }
    }

    /// Every entry, in no particular order.
    var values: [CacheEntrySnapshot] { slots.compactMap { $0?.entry } }

    /// Every key, in no particular order.
    var keys: [CacheKey] { slots.compactMap { $0?.key } }

    /// Removes the entries whose key matches.
    mutating func removeAll(where match: (CacheKey) -> Bool) {
        let kept = slots.compactMap { $0 }.filter { !match($0.key) }
        self = EntryTable(minimumCapacity: max(kept.count, 8))
        for slot in kept { insert(slot.key, slot.entry) }
    }
}
