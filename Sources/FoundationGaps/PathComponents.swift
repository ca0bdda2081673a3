// File paths as text, as NSString's path methods treat them (the full Foundation's), for the few
// places ipdirect builds or shortens a path: a file beside another, a path shown by its name.

extension StringProtocol {
    /// The path without its last component: `/tmp/a.pem` → `/tmp`, `/tmp/x/` → `/tmp`, `/a` → `/`,
    /// `a.pem` → `""`; as NSString's `deletingLastPathComponent`.
    public var deletingLastPathComponent: String {
        let path = withoutTrailingSlashes
        guard let slash = path.lastIndex(of: "/") else { return "" }
        let directory = path[..<slash]
        return directory.isEmpty ? "/" : String(directory)
    }

    /// The last component: `/tmp/a.pem` → `a.pem`, `/tmp/x/` → `x`, `/` → `/`.
    public var lastPathComponent: String {
        let path = withoutTrailingSlashes
        if path == "/" { return "/" }
        guard let slash = path.lastIndex(of: "/") else { return String(path) }
        return String(path[path.index(after: slash)...])
    }

    /// `component` added after a `/`: `/tmp` + `a.pem` → `/tmp/a.pem`, `/tmp/` + `a.pem` →
    /// `/tmp/a.pem`, `""` + `a.pem` → `a.pem`.
    public func appendingPathComponent(_ component: some StringProtocol) -> String {
        if isEmpty { return String(component) }
        return (hasSuffix("/") ? String(self) : self + "/") + component
    }

    /// The path with repeated and trailing slashes removed (`/` stays `/`).
    private var withoutTrailingSlashes: String {
        var path = String(self)
        while path.contains("//") { path = path.replacing("//", with: "/") }
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
