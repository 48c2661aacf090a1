package rules

// Files returns every file the configuration was loaded from: the rule
// file first, then each catalog its fields name, in the order first named,
// each once. A change to any of them changes the rules.
func (c *Config) Files() []string {
	files := []string{c.File}
	seen := map[string]bool{c.File: true}
	for _, r := range c.Routes {
		for _, f := range r.Fields {
			if f.Catalog != nil && !seen[f.Catalog.File] {
				seen[f.Catalog.File] = true
				files = append(files, f.Catalog.File)
			}
		}
	}
	return files
}
