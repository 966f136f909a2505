package depprobe

import (
	_ "github.com/cli/go-gh/v2/pkg/api"
	_ "github.com/cli/go-gh/v2/pkg/auth"
	_ "github.com/cli/go-gh/v2/pkg/jq"
	_ "github.com/cli/go-gh/v2/pkg/repository"
	_ "github.com/cli/go-gh/v2/pkg/tableprinter"
	_ "github.com/cli/go-gh/v2/pkg/template"
	_ "github.com/cli/go-gh/v2/pkg/term"
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/getkin/kin-openapi/openapi3filter"
	_ "github.com/getkin/kin-openapi/routers/gorillamux"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/sethvargo/go-githubactions"
	_ "github.com/shurcooL/githubv4"
	_ "github.com/spf13/cobra"
	_ "github.com/vektah/gqlparser/v2"
	_ "gopkg.in/yaml.v3"
)
