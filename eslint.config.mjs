import effect from "@effect/eslint-plugin"
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  {
    ignores: ["**/build/**", "**/dist/**", "**/node_modules/**", "**/.tsbuildinfo/**", "**/*.md", "bench/RESULTS.md"]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...effect.configs.dprint,
  {
    languageOptions: {
      parser: tseslint.parser,
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { process: "readonly", console: "readonly", URL: "readonly", setTimeout: "readonly" }
    },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "no-console": "error",
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off"
    }
  },
  {
    files: ["packages/*/src/**/*.ts"],
    rules: {
      "@effect/no-import-from-barrel-package": ["error", { packageNames: ["effect"] }]
    }
  },
  {
    // the core belongs to both Effect lines: it imports nothing but its own modules
    files: ["core/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{
          regex: "^(?!\\.\\.?/)",
          message: "core/src imports only relative paths: no effect, @effect/*, @sluice/*, ioredis or node:*"
        }]
      }]
    }
  },
  {
    files: ["**/test/**/*.ts", "bench/**/*.ts", "examples/**/*.ts", "scripts/**/*.mjs"],
    rules: {
      "no-console": "off",
      "@typescript-eslint/no-non-null-assertion": "off"
    }
  }
)
