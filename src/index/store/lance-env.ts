// LanceDB's native logger prints every warning of its index builder (hundreds of lines for a small
// table); keep errors only unless the user asked for more. Imported before LanceDB so it is set in time.
process.env.LANCEDB_LOG ??= "error";
